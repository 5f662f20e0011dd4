import { StoreUnavailableError } from "../../src/errors.js";
import type { SlotStore } from "../../src/store/types.js";
import { type ServerConfig, withoutCredentials } from "./config.js";
import { redisTargetOf } from "./serving-lock.js";

type StoreConfig = Pick<ServerConfig, "redisUrl" | "redisFailurePolicy"> &
  Partial<Pick<ServerConfig, "redisClusterNodes" | "redisPrefix" | "redisRestoreGraceMs">>;

/**
 * The slot store the config asks for: undefined (the governor's in-memory store) unless
 * `redisUrl` or `redisClusterNodes` is set. The Redis adapter is loaded with a dynamic `import()` only then, so the
 * embedded default never loads ioredis. With the `closed` policy an unreachable Redis fails
 * the start; with `open` the server starts degraded (per-process limits) and says so.
 * Health changes are logged as they happen, and so is what is wrong with the Redis server
 * (an eviction policy other than `noeviction`, a version older than 7.0).
 *
 * @example
 * ```ts
 * const governor = createGovernor({ store: await slotStoreFor(config, console.log) });
 * ```
 */
export async function slotStoreFor(
  config: StoreConfig,
  log: (line: string) => void,
): Promise<SlotStore | undefined> {
  const where = redisWhere(config);
  if (where === null) return undefined;
  const { createRedisSlotStore } = await import("../redis/index.js");
  const store = createRedisSlotStore({
    ...(config.redisClusterNodes === undefined
      ? { url: config.redisUrl }
      : { cluster: { nodes: config.redisClusterNodes } }),
    failurePolicy: config.redisFailurePolicy,
    ...(config.redisPrefix === undefined ? {} : { prefix: config.redisPrefix }),
    ...(config.redisRestoreGraceMs === undefined
      ? {}
      : { restoreGraceMs: config.redisRestoreGraceMs }),
  });
  try {
    await store.ready();
  } catch (error) {
    if (config.redisFailurePolicy === "closed") {
      await store.close();
      throw cannotStart(where, error);
    }
    log(`Redis at ${where} is not reachable yet; admitting with per-process limits until it is.`);
  }
  if (store.health().state === "ok") {
    for (const warning of await store.serverWarnings()) log(`Warning: ${warning}`);
  }
  store.onStatus((health) => {
    const reason = health.reason ? ` (${health.reason})` : "";
    log(`Redis slot store at ${where} is ${health.state}${reason}`);
  });
  return store;
}

/** Why a fail-closed server does not start: where Redis was looked for, and the way out. */
function cannotStart(where: string, error: unknown): StoreUnavailableError {
  const why = error instanceof Error ? error.message.replace(/^Redis is unavailable: /, "") : "";
  return new StoreUnavailableError(
    `Cannot reach Redis at ${where} (${why}). With --redis-failure-policy closed (the default) ` +
      "the server does not start without it: start Redis, fix --redis-url (or --redis-cluster-nodes), or choose " +
      "--redis-failure-policy open.",
    { cause: error },
  );
}

/**
 * How the store is described in the start-up lines (the URL with its credentials masked).
 *
 * @example
 * ```ts
 * describeSlotStore({ redisUrl: "redis://:pw@10.0.0.5:6379/0", redisFailurePolicy: "closed" });
 * // "Redis slot store at redis://***@10.0.0.5:6379/0 (fail closed)"
 * ```
 */
export function describeSlotStore(config: StoreConfig): string {
  const where = redisWhere(config);
  if (where === null) return "in-memory slot store (this process only)";
  return `Redis slot store at ${where} (fail ${config.redisFailurePolicy})`;
}

/** Where the slots are, for a person: the URL without credentials, or the cluster's nodes. */
function redisWhere(config: StoreConfig): string | null {
  if (config.redisClusterNodes !== undefined) {
    return `Redis Cluster ${config.redisClusterNodes.join(",")}`;
  }
  return config.redisUrl === undefined ? null : withoutCredentials(config.redisUrl);
}

/**
 * Where a server keeps its slots for the serving lock (`lockForServing`): two spellings of
 * one Redis compare equal, a cluster is named by its nodes in order, null in memory.
 *
 * @example
 * ```ts
 * slotTargetOf({ redisClusterNodes: ["b:7000", "a:7000"], redisPrefix: "sluice:", ... });
 * // "redis+cluster://a:7000,b:7000 prefix sluice:"
 * ```
 */
export function slotTargetOf(
  config: StoreConfig & Pick<ServerConfig, "redisPrefix">,
): string | null {
  if (config.redisClusterNodes !== undefined) {
    const nodes = [...config.redisClusterNodes].map((node) => node.toLowerCase()).sort();
    return `redis+cluster://${nodes.join(",")} prefix ${config.redisPrefix}`;
  }
  return config.redisUrl === undefined ? null : redisTargetOf(config.redisUrl, config.redisPrefix);
}
