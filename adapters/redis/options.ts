import * as v from "valibot";
import type { Clock } from "../../src/clock/clock.js";
import { parseOrThrow } from "../../src/governor/settings.js";
import { isClusterNode, type RedisClient, type RedisClusterTarget } from "./cluster.js";
import type { StoreHealth } from "./health.js";

/**
 * Default of {@link RedisSlotStoreOptions.restoreGraceMs}: more than ioredis's longest delay
 * between two reconnection attempts (2 000 ms), so every running process is back in time.
 */
export const DEFAULT_RESTORE_GRACE_MS = 3_000;

/** What to do when Redis cannot be reached. */
export type FailurePolicy = "closed" | "open";

/** Options of {@link createRedisSlotStore}. */
export interface RedisSlotStoreOptions {
  /**
   * Redis URL (default `redis://127.0.0.1:6379`), or a cluster's nodes as
   * `redis+cluster://[user:password@]host:port,host:port`.
   */
  url?: string;
  /**
   * A client whose connection settings the store reuses (it opens its own two connections); an
   * ioredis `Cluster` makes the store speak to that cluster.
   */
  redis?: RedisClient;
  /** A Redis Cluster, by some of its nodes (`"host:port"` or `{ host, port }`). */
  cluster?: RedisClusterTarget;
  /** Prefix of every key and of the event channel (default `sluice:`). */
  prefix?: string;
  /** Injected clock: scripts use its time instead of the server's TIME (tests). */
  clock?: Clock;
  /**
   * `"closed"` (default): operations throw `StoreUnavailableError` while Redis is unreachable.
   * `"open"`: each process falls back to its own in-memory store with the same pools until
   * Redis answers again (limits then hold per process, not across processes).
   */
  failurePolicy?: FailurePolicy;
  /** Bound on one Redis call, waiting for a connection included (default 1000 ms). */
  commandTimeoutMs?: number;
  /** First and longest delay between recovery probes while Redis is down (default 100 / 2000 ms). */
  recoveryProbeMs?: { min: number; max: number };
  /**
   * After Redis came back without its data (a restart without persistence), how long a pool
   * re-created by a recovering process admits nobody new (default 3000 ms: more than the
   * longest wait between two reconnection attempts, 2000 ms), so every process can hand back
   * the slots its callers still hold before waiters are served. Fail-fast callers meanwhile
   * get `paused`.
   */
  restoreGraceMs?: number;
}

const wholeMs = (least: number) => v.pipe(v.number(), v.integer(), v.minValue(least));

/**
 * The check of {@link RedisSlotStoreOptions} at run time (TypeScript checks them at compile
 * time; plain JavaScript gets this): unknown keys (a misspelt `keyPrefix` for `prefix`) and
 * values out of range are refused instead of silently defaulted.
 */
const RedisSlotStoreOptionsSchema = v.strictObject(
  {
    url: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        // ioredis takes any scheme and then fails to connect with no word of why (an
        // `http://` URL answered "no connection"); a bare host:port or a socket path is fine.
        v.check(
          (url) =>
            !/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^(rediss?|redis\+cluster):\/\//i.test(url),
          "Must be a redis://, rediss:// or redis+cluster:// URL.",
        ),
      ),
    ),
    redis: v.optional(
      v.custom<RedisClient>(
        (value) => typeof value === "object" && value !== null && "options" in value,
        "Must be an ioredis client (Redis or Cluster).",
      ),
    ),
    cluster: v.optional(
      v.strictObject({
        nodes: v.pipe(
          v.array(
            v.union(
              [
                v.pipe(v.string(), v.check(isClusterNode)),
                v.strictObject({ host: v.pipe(v.string(), v.minLength(1)), port: wholeMs(1) }),
              ],
              'Each node must be "host:port" or { host, port }.',
            ),
          ),
          v.minLength(1, "Name at least one node."),
        ),
      }),
    ),
    prefix: v.optional(v.string()),
    clock: v.optional(
      v.custom<Clock>(
        (value) => typeof (value as Partial<Clock> | null)?.now === "function",
        "Must be a Clock (with now()).",
      ),
    ),
    failurePolicy: v.optional(v.picklist(["closed", "open"], 'Must be "closed" or "open".')),
    commandTimeoutMs: v.optional(wholeMs(1)),
    recoveryProbeMs: v.optional(
      v.pipe(
        v.strictObject({ min: wholeMs(1), max: wholeMs(1) }),
        v.check((probe) => probe.min <= probe.max, "min must not exceed max."),
      ),
    ),
    restoreGraceMs: v.optional(wholeMs(0)),
  },
  "Not an option of the Redis store.",
);

/** One place to connect to: a cluster excludes a URL or a template client. */
const OneTargetSchema = v.pipe(
  RedisSlotStoreOptionsSchema,
  v.check(
    (options) => options.cluster === undefined || (options.url ?? options.redis) === undefined,
    "Give either cluster, url or redis, not several.",
  ),
);

/**
 * Refuses options of {@link createRedisSlotStore} that are unknown or out of range, with an
 * `InvalidArgumentError` listing every problem.
 *
 * @example
 * ```ts
 * checkRedisSlotStoreOptions({ keyPrefix: "app:" }); // throws: keyPrefix is no option
 * ```
 */
export function checkRedisSlotStoreOptions(options: RedisSlotStoreOptions): void {
  parseOrThrow(OneTargetSchema, options, "Redis store options");
}

/** Counters for benchmarks and status output. */
export interface RedisStoreStats {
  /** Commands sent to Redis (one network round trip each). */
  roundTrips: number;
  /**
   * Times the server had lost the store's code: its Functions library loaded again after
   * "function not found", or a script re-sent in full after NOSCRIPT.
   */
  scriptReloads: number;
  /**
   * How operations run: `functions` (one Redis Functions library, `FCALL`) or `eval`
   * (`EVALSHA`, where the server does not allow Functions).
   */
  scripting: "functions" | "eval";
  /** Operations answered by the local fallback store. */
  localOperations: number;
  /** The store's health now (see `health()`). */
  state: StoreHealth["state"];
}
