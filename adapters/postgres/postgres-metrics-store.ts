import type { MetricsStore } from "../../src/metrics/metrics-store.js";
import { METRIC_COUNT_FIELDS, type MetricsBucket } from "../../src/metrics/types.js";
import type { Queryable } from "./connect.js";
import { translatePostgresError } from "./postgres-errors.js";

const COLUMN_OF: Record<(typeof METRIC_COUNT_FIELDS)[number], string> = {
  requests: "requests",
  admitted: "admitted",
  queued: "queued",
  rejected: "rejected",
  timedOut: "timed_out",
  throttled: "throttled",
  released: "released",
  queueWaitMs: "queue_wait_ms",
  holdMs: "hold_ms",
};
const COUNT_COLUMNS = METRIC_COUNT_FIELDS.map((field) => COLUMN_OF[field]);

/**
 * Metric buckets in PostgreSQL (table `metrics_buckets`). `addBuckets` adds each server's
 * increments in one statement (`count = count + excluded.count`), so the counts of every
 * server of a fleet add up and none overwrites another's.
 *
 * @example
 * ```ts
 * const metrics = new PostgresMetricsStore(pool);
 * await metrics.addBuckets(deltas);
 * ```
 */
export class PostgresMetricsStore implements MetricsStore {
  constructor(private readonly db: Queryable) {}

  async addBuckets(deltas: readonly MetricsBucket[]): Promise<void> {
    if (deltas.length === 0) return;
    // One statement over arrays: one round trip and one transaction for the whole batch.
    const columns = ["pool", "start", ...COUNT_COLUMNS];
    const arrays = [
      deltas.map((bucket) => bucket.pool),
      deltas.map((bucket) => bucket.start),
      ...METRIC_COUNT_FIELDS.map((field) => deltas.map((bucket) => bucket[field])),
    ];
    const types = ["text[]", "bigint[]", ...COUNT_COLUMNS.map(() => "bigint[]")];
    await this.query(
      `INSERT INTO metrics_buckets (${columns.join(", ")})
       SELECT * FROM unnest(${types.map((type, index) => `$${index + 1}::${type}`).join(", ")})
       ON CONFLICT (pool, start) DO UPDATE SET
       ${COUNT_COLUMNS.map((column) => `${column} = metrics_buckets.${column} + excluded.${column}`).join(", ")}`,
      arrays,
    );
  }

  async loadBuckets(sinceMs: number): Promise<MetricsBucket[]> {
    const result = await this.query(
      `SELECT pool, start, ${COUNT_COLUMNS.join(", ")} FROM metrics_buckets
       WHERE start >= $1 ORDER BY pool, start`,
      [sinceMs],
    );
    return result.rows.map((row: Record<string, unknown>) => {
      const bucket = { pool: row.pool, start: row.start } as MetricsBucket;
      for (const field of METRIC_COUNT_FIELDS) bucket[field] = row[COLUMN_OF[field]] as number;
      return bucket;
    });
  }

  async pruneBefore(ms: number, pool?: string): Promise<number> {
    const result =
      pool === undefined
        ? await this.query("DELETE FROM metrics_buckets WHERE start < $1", [ms])
        : await this.query("DELETE FROM metrics_buckets WHERE pool = $1 AND start < $2", [
            pool,
            ms,
          ]);
    return result.rowCount ?? 0;
  }

  async deletePool(pool: string): Promise<number> {
    const result = await this.query("DELETE FROM metrics_buckets WHERE pool = $1", [pool]);
    return result.rowCount ?? 0;
  }

  private async query(sql: string, values: unknown[]) {
    try {
      return await this.db.query(sql, values);
    } catch (error) {
      throw translatePostgresError(error, "metrics");
    }
  }
}
