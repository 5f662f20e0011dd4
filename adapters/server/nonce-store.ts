import type { Clock } from "../../src/clock/clock.js";
import { MemoryNonceStore, type NonceStore } from "../../src/policies/nonce-store.js";
import type { ServerConfig } from "./config.js";

/**
 * Where the server remembers signed requests' nonces (pools with the `hmac` caller policy):
 * in Redis when slots are there too (`--redis-url`), so a request replayed to another
 * server is caught; in memory otherwise. The Redis adapter is loaded only then.
 *
 * @example
 * ```ts
 * const nonces = await nonceStoreFor(config, clock);
 * ```
 */
export async function nonceStoreFor(
  config: Pick<ServerConfig, "redisUrl" | "redisPrefix">,
  clock: Clock,
): Promise<NonceStore & { close?(): Promise<void> }> {
  if (config.redisUrl === undefined) return new MemoryNonceStore({ now: () => clock.now() });
  const { RedisNonceStore } = await import("../redis/redis-nonce-store.js");
  return new RedisNonceStore({ url: config.redisUrl, prefix: config.redisPrefix });
}
