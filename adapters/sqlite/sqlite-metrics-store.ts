import type Database from "better-sqlite3";
import type { Statement } from "better-sqlite3";
import type { MetricsStore } from "../../src/metrics/metrics-store.js";
import type { MetricsBucket } from "../../src/metrics/types.js";
import { databaseGate } from "./database-gate.js";
import { backgroundWrite, guardedWrite } from "./sqlite-errors.js";

interface BucketRow {
  pool: string;
  start: number;
  requests: number;
  admitted: number;
  queued: number;
  rejected: number;
  timed_out: number;
  throttled: number;
  released: number;
  queue_wait_ms: number;
  hold_ms: number;
}

const BUCKET_COLUMNS = `pool, start, requests, admitted, queued, rejected, timed_out, throttled,
  released, queue_wait_ms, hold_ms`;

/**
 * Persistence of per-pool metric buckets (table `metrics_buckets`, created by the migrations),
 * on a database opened with `openSluiceDatabase`. Buckets are whole totals, so saving one
 * replaces its row: save what `MetricsRecorder.drainDirty()` returns, feed `loadBuckets` to
 * `MetricsRecorder.load()` at start-up, and apply retention with `pruneBefore`.
 *
 * `saveBuckets` replaces rows (one writer per pool); `addBuckets` adds increments to them,
 * so several processes on one database each add what they counted (the server uses it).
 *
 * @example
 * ```ts
 * const metrics = new SqliteMetricsStore(db);
 * recorder.load(await metrics.loadBuckets(now - retentionMs));
 * await metrics.saveBuckets(recorder.drainDirty());
 * ```
 */
export class SqliteMetricsStore implements MetricsStore {
  private readonly upsert: Statement;
  private readonly selectSince: Statement<[number]>;
  private readonly deleteBefore: Statement<[number]>;
  private readonly deleteOfPool: Statement<[string]>;
  private readonly deleteOfPoolBefore: Statement<[string, number]>;
  private readonly saveAll: Database.Transaction<(buckets: readonly MetricsBucket[]) => void>;
  private readonly increment: Statement;
  private readonly addAll: Database.Transaction<(deltas: readonly MetricsBucket[]) => void>;

  constructor(private readonly database: Database.Database) {
    this.upsert = database.prepare(
      `INSERT INTO metrics_buckets (${BUCKET_COLUMNS})
       VALUES (@pool, @start, @requests, @admitted, @queued, @rejected, @timedOut, @throttled,
         @released, @queueWaitMs, @holdMs)
       ON CONFLICT (pool, start) DO UPDATE SET
         requests = excluded.requests, admitted = excluded.admitted, queued = excluded.queued,
         rejected = excluded.rejected, timed_out = excluded.timed_out,
         throttled = excluded.throttled, released = excluded.released,
         queue_wait_ms = excluded.queue_wait_ms, hold_ms = excluded.hold_ms`,
    );
    this.selectSince = database.prepare(
      `SELECT ${BUCKET_COLUMNS} FROM metrics_buckets WHERE start >= ? ORDER BY pool, start`,
    );
    this.deleteBefore = database.prepare("DELETE FROM metrics_buckets WHERE start < ?");
    this.deleteOfPool = database.prepare("DELETE FROM metrics_buckets WHERE pool = ?");
    this.deleteOfPoolBefore = database.prepare(
      "DELETE FROM metrics_buckets WHERE pool = ? AND start < ?",
    );
    this.increment = database.prepare(
      `INSERT INTO metrics_buckets (${BUCKET_COLUMNS})
       VALUES (@pool, @start, @requests, @admitted, @queued, @rejected, @timedOut, @throttled,
         @released, @queueWaitMs, @holdMs)
       ON CONFLICT (pool, start) DO UPDATE SET
         requests = requests + excluded.requests, admitted = admitted + excluded.admitted,
         queued = queued + excluded.queued, rejected = rejected + excluded.rejected,
         timed_out = timed_out + excluded.timed_out, throttled = throttled + excluded.throttled,
         released = released + excluded.released,
         queue_wait_ms = queue_wait_ms + excluded.queue_wait_ms, hold_ms = hold_ms + excluded.hold_ms`,
    );
    // One transaction per batch: one fsync-worthy commit instead of one per bucket.
    this.saveAll = database.transaction((buckets: readonly MetricsBucket[]) => {
      for (const bucket of buckets) this.upsert.run(bucketParams(bucket));
    });
    this.addAll = database.transaction((deltas: readonly MetricsBucket[]) => {
      for (const delta of deltas) this.increment.run(bucketParams(delta));
    });
  }

  /**
   * Adds increments (counts since the last save of this process) to the stored buckets, in
   * one transaction: what other processes added to the same buckets is kept.
   *
   * @example
   * ```ts
   * await store.addBuckets([{ pool: "llm", start, ...emptyMetricCounts(), requests: 3 }]);
   * ```
   */
  async addBuckets(deltas: readonly MetricsBucket[]): Promise<void> {
    if (deltas.length === 0) return;
    await databaseGate(this.database).idle();
    backgroundWrite(this.database, "metrics", () => this.addAll.immediate(deltas));
  }

  /** Upserts buckets (each replaces the stored row for its pool and start) in one transaction. */
  async saveBuckets(buckets: readonly MetricsBucket[]): Promise<void> {
    if (buckets.length === 0) return;
    await databaseGate(this.database).idle();
    backgroundWrite(this.database, "metrics", () => this.saveAll.immediate(buckets));
  }

  /** Every bucket starting at or after `sinceMs`, ordered by pool then start. */
  async loadBuckets(sinceMs: number): Promise<MetricsBucket[]> {
    await databaseGate(this.database).idle();
    return (this.selectSince.all(sinceMs) as BucketRow[]).map(bucketFromRow);
  }

  /** Deletes buckets starting before `ms` (of one pool when given); returns how many went. */
  async pruneBefore(ms: number, pool?: string): Promise<number> {
    await databaseGate(this.database).idle();
    return backgroundWrite(this.database, "metrics", () =>
      pool === undefined
        ? this.deleteBefore.run(ms).changes
        : this.deleteOfPoolBefore.run(pool, ms).changes,
    );
  }

  /**
   * Deletes every bucket of a pool; returns how many. Pools are keyed by subdomain, which a
   * new pool (of any team) may take once the old one is deleted: its history must not carry over.
   *
   * @example
   * ```ts
   * await store.deletePool("chat");
   * ```
   */
  async deletePool(pool: string): Promise<number> {
    await databaseGate(this.database).idle();
    return guardedWrite("metrics", () => this.deleteOfPool.run(pool).changes);
  }
}

function bucketParams(bucket: MetricsBucket): Record<string, string | number> {
  return {
    pool: bucket.pool,
    start: bucket.start,
    requests: bucket.requests,
    admitted: bucket.admitted,
    queued: bucket.queued,
    rejected: bucket.rejected,
    timedOut: bucket.timedOut,
    throttled: bucket.throttled,
    released: bucket.released,
    queueWaitMs: bucket.queueWaitMs,
    holdMs: bucket.holdMs,
  };
}

function bucketFromRow(row: BucketRow): MetricsBucket {
  return {
    pool: row.pool,
    start: row.start,
    requests: row.requests,
    admitted: row.admitted,
    queued: row.queued,
    rejected: row.rejected,
    timedOut: row.timed_out,
    throttled: row.throttled,
    released: row.released,
    queueWaitMs: row.queue_wait_ms,
    holdMs: row.hold_ms,
  };
}
