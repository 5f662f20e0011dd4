import type { RejectionReason } from "../errors.js";
import type { CallerPolicyName } from "../policies/policy-refusal.js";

/**
 * How one acquire attempt ended:
 * - `admitted`: a slot was free at once;
 * - `queued`: admitted after waiting in the queue (`queuedMs` > 0);
 * - `rejected`: turned away at once (429);
 * - `timed_out`: waited the whole wait budget (504);
 * - `aborted`: the caller went away while waiting;
 * - `unavailable`: the server could not take it (shutting down, or its Redis slot store
 *   away): answered 503, also when it had been waiting (`queuedMs`);
 * - `refused`: turned away by one of the pool's caller policies (401 or 403) before a slot
 *   was asked for; `reason` names the policy.
 */
export type AccessOutcome = (typeof ACCESS_OUTCOMES)[number];

/**
 * Every {@link AccessOutcome}, in the order filters list them.
 *
 * @example
 * ```ts
 * const outcome = ACCESS_OUTCOMES.find((known) => known === query.outcome) ?? null;
 * ```
 */
export const ACCESS_OUTCOMES = [
  "admitted",
  "queued",
  "rejected",
  "timed_out",
  "aborted",
  "unavailable",
  "refused",
] as const;

/** Which door the attempt came through. */
export type AccessSource = "lock" | "proxy";

/** One acquire attempt in a pool's access log. Renewals and releases are never logged. */
export interface AccessLogEntry {
  /** Epoch ms when the attempt was decided. */
  at: number;
  /** Pool subdomain. */
  pool: string;
  /** Id of the pool key used, or null for a keyless caller of an open pool. */
  keyId: number | null;
  outcome: AccessOutcome;
  /** Why a `rejected` attempt was turned away, or which policy `refused` it; null otherwise. */
  reason: RejectionReason | CallerPolicyName | null;
  /** Time spent in the queue (0 when not queued). */
  queuedMs: number;
  /** The caller's socket address, when known. */
  remoteAddress: string | null;
  source: AccessSource;
  /**
   * The status the upstream answered a proxied call with (HTTP pools: the origin's status,
   * 429 included; SQL pools: the status the query was answered with, 200 or its error's), known once the call
   * ends, so a granted proxy attempt is appended then. Null when there was no answer: the
   * attempt was not granted, the origin failed or timed out, the database was too busy to
   * take the query, or it came through the Lock API (its caller calls the upstream itself;
   * a release's outcome report feeds learning and metrics).
   */
  upstreamStatus: number | null;
}

/** A read of one pool's log: `from` inclusive, `to` exclusive (epoch ms), newest first. */
export interface AccessLogQuery {
  from?: number;
  to?: number;
  /** At most this many entries (default 100, at most 10 000). */
  limit?: number;
}

/** {@link AccessLogQuery} with every bound filled in. */
export interface ResolvedAccessLogQuery {
  from: number;
  to: number;
  limit: number;
}

/**
 * Persistence of access log entries (memory, SQLite, PostgreSQL). Async, as a database may be
 * across a network; {@link BufferedAccessLog} keeps writes off the request path.
 */
export interface AccessLogStore {
  /** Appends entries (one batch, one transaction where that applies). */
  insert(entries: readonly AccessLogEntry[]): Promise<void>;
  /** Entries of `pool` with `from ≤ at < to`, newest first, at most `limit`. */
  list(pool: string, query: ResolvedAccessLogQuery): Promise<AccessLogEntry[]>;
  /** Deletes the pool's entries older than `beforeMs`; returns how many went. */
  pruneBefore(pool: string, beforeMs: number): Promise<number>;
  /** Deletes every entry of the pool; returns how many went. */
  deletePool(pool: string): Promise<number>;
}

/** Per-pool retention: entries older than `retentionDays` are pruned. */
export interface AccessLogRetention {
  pool: string;
  retentionDays: number;
  /**
   * When the pool was created (epoch ms): older entries were written by an earlier pool of
   * the same subdomain and are pruned too. Absent: only `retentionDays` applies.
   */
  createdAt?: number;
}

/**
 * The access log as the Lock API and the proxy use it: `append` never blocks or throws;
 * entries reach the store in batches. Readable through the library with `list`.
 */
export interface AccessLog {
  /** Queues an entry for the next batch write. */
  append(entry: AccessLogEntry): void;
  /** Writes what is buffered, then reads (so a read sees every earlier append). */
  list(pool: string, query?: AccessLogQuery): Promise<AccessLogEntry[]>;
  /** Deletes entries older than each pool's retention, measured from `now`. */
  prune(retention: Iterable<AccessLogRetention>, now: number): Promise<number>;
  /**
   * Deletes every entry of a pool that is gone (buffered and stored); returns how many went.
   * A subdomain may later name another pool, maybe another team's, which must not see them.
   */
  forgetPool(pool: string): Promise<number>;
  /** Writes the buffered entries now (after a write already under way). */
  flush(): Promise<void>;
  /** Flushes and stops the flush timer; later appends are dropped (the store may be closing). */
  close(): Promise<void>;
}
