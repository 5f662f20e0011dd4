import type { Redis } from "ioredis";
import type { NonceStore } from "../../src/policies/nonce-store.js";
import {
  boundedOptions,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_REDIS_URL,
  redisClient,
  redisUnavailable,
} from "./connection.js";
import { DEFAULT_KEY_PREFIX } from "./keys.js";

/** Options of {@link RedisNonceStore}. */
export interface RedisNonceStoreOptions {
  /** Default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Start of every key (`sluice:`); the nonces live under `{prefix}nonce:`. */
  prefix?: string;
  /** Bound on one call; default 1 s. */
  commandTimeoutMs?: number;
}

/**
 * Signed requests' nonces in Redis, shared by every server using it: `SET key 1 NX PX ttl`
 * records a nonce only when it is new, and Redis forgets it when its window ends. A replay
 * sent to another server is caught too. When Redis does not answer, `claim` throws
 * `StoreUnavailableError` (503): a nonce that cannot be checked admits nothing.
 *
 * @example
 * ```ts
 * const nonces = new RedisNonceStore({ url: "redis://10.0.0.5:6379", prefix: "sluice:" });
 * await nonces.claim("7:n0nce-0123456789ab", 600_000); // true, then false
 * await nonces.close();
 * ```
 */
export class RedisNonceStore implements NonceStore {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(options: RedisNonceStoreOptions = {}) {
    const bounded = boundedOptions(options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS);
    this.redis = new (redisClient())(options.url ?? DEFAULT_REDIS_URL, bounded);
    // Failures surface through claim(); an unhandled "error" event would end the process.
    this.redis.on("error", () => {});
    this.prefix = `${options.prefix ?? DEFAULT_KEY_PREFIX}nonce:`;
  }

  async claim(nonce: string, ttlMs: number): Promise<boolean> {
    let reply: string | null;
    try {
      reply = await this.redis.set(
        this.prefix + nonce,
        "1",
        "PX",
        Math.max(1, Math.ceil(ttlMs)),
        "NX",
      );
    } catch (error) {
      throw redisUnavailable("the nonce of a signed request could not be checked", error);
    }
    return reply === "OK";
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
