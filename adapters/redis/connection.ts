import type { Cluster, Redis, RedisOptions } from "ioredis";
import { StoreUnavailableError } from "../../src/errors.js";
import { optionalPackage } from "../packages/optional-package.js";
import {
  clusterOptions,
  isClusterUrl,
  openCluster,
  type RedisClient,
  type RedisClusterTarget,
} from "./cluster.js";

/** Default bound on one Redis call, connecting included. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;
/** Where the store connects when given neither `url` nor `redis`. */
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

/**
 * Options that make a call fail within `commandTimeoutMs` instead of hanging: a command
 * waits for a (re)connection at most that long, a connection loss fails queued and sent
 * commands at once, and a script that was in flight is never replayed after a reconnect (an
 * acquire sent twice could grant twice).
 *
 * @example
 * ```ts
 * const redis = new Redis(url, boundedOptions(1000));
 * ```
 */
export function boundedOptions(commandTimeoutMs: number): RedisOptions {
  return {
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(commandTimeoutMs, 1_000),
    maxRetriesPerRequest: 0,
    enableOfflineQueue: true,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
  };
}

/** The connection pair a store uses: one for scripts, one subscribed to events. */
export interface StoreConnections {
  command: RedisClient;
  subscriber: RedisClient;
}

/** Where the store's connections go: a URL, a template client, or a cluster's nodes. */
export interface ConnectionSource {
  url?: string;
  redis?: RedisClient;
  cluster?: RedisClusterTarget;
}

/**
 * Opens the store's own connections. A given client is only a template: its connection
 * settings are reused through `duplicate()`, and the caller keeps and closes it. A cluster
 * (`cluster`, a `redis+cluster://` URL or a `Cluster` template) gets two `Cluster` clients,
 * the subscriber with sharded subscriptions (one connection per master).
 *
 * @example
 * ```ts
 * const { command, subscriber } = openConnections({ url: "redis://127.0.0.1:6379" }, 1000);
 * ```
 */
export function openConnections(
  source: ConnectionSource,
  commandTimeoutMs: number,
): StoreConnections {
  const options = boundedOptions(commandTimeoutMs);
  const target = source.cluster ?? (source.url && isClusterUrl(source.url) ? source.url : null);
  if (target) {
    return {
      command: openCluster(target, options, false),
      subscriber: openCluster(target, options, true),
    };
  }
  if (source.redis?.isCluster) {
    // A template cluster: its nodes and settings, with the store's bounds on every node.
    const template = source.redis as Cluster;
    const nodeOptions = { ...template.options.redisOptions, ...options };
    return {
      command: template.duplicate([], clusterOptions(nodeOptions, false)),
      subscriber: template.duplicate([], clusterOptions(nodeOptions, true)),
    };
  }
  const command = source.redis
    ? (source.redis as Redis).duplicate(options)
    : new (redisClient())(source.url ?? DEFAULT_REDIS_URL, options);
  const subscriber = command.duplicate();
  return { command, subscriber };
}

/**
 * The ioredis client class, loaded on first use: ioredis is an optional dependency, so
 * importing the Redis adapter never fails where it is not installed; connecting then says
 * which package to install.
 *
 * @example
 * ```ts
 * const client = new (redisClient())("redis://127.0.0.1:6379");
 * ```
 */
export function redisClient(): typeof Redis {
  return optionalPackage<typeof import("ioredis")>("ioredis", "The Redis slot store").Redis;
}

/** Server answers that mean "not now" rather than "this script is wrong". */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|NOREPLICAS)\b/;

/**
 * True when an error from ioredis means Redis cannot be reached or cannot answer now
 * (connection refused or lost, timeout, server loading or busy), false for a real error
 * reply (a bug in a script, a wrong key type).
 *
 * @example
 * ```ts
 * isUnavailable(new Error("Connection is closed.")); // true
 * ```
 */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === "ReplyError") return TRANSIENT_REPLY.test(error.message);
  return true;
}

/**
 * Wraps an unreachable-Redis error in the store's typed error; returns anything else as is.
 *
 * @example
 * ```ts
 * try { await redis.ping(); } catch (error) { throw toStoreError(error); }
 * ```
 */
export function toStoreError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !isUnavailable(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  // ioredis reports a refused or dropped connection as a spent retry budget.
  const reason = /max retries per request/i.test(message) ? "no connection" : message;
  return redisUnavailable(reason, error);
}

const UNAVAILABLE = "Redis is unavailable";

/**
 * The store's typed error for an unreachable Redis, saying why once: `reason` may be the
 * message of such an error already (the health monitor keeps it).
 *
 * @example
 * ```ts
 * throw redisUnavailable("Command timed out"); // "Redis is unavailable: Command timed out"
 * ```
 */
export function redisUnavailable(reason: string | null, cause?: unknown): StoreUnavailableError {
  const message =
    reason === null
      ? `${UNAVAILABLE}.`
      : reason.startsWith(UNAVAILABLE)
        ? reason
        : `${UNAVAILABLE}: ${reason}`;
  return new StoreUnavailableError(message, cause === undefined ? undefined : { cause });
}
