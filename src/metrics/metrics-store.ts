import type { MetricsBucket } from "./types.js";

/**
 * Persistence of per-pool metric buckets, shared by every server on one database (SQLite
 * file, PostgreSQL): each adds the increments it counted, so no server overwrites another's.
 * One contract suite runs against each implementation.
 *
 * @example
 * ```ts
 * await store.addBuckets([{ pool: "llm", start, ...emptyMetricCounts(), requests: 3 }]);
 * recorder.load(await store.loadBuckets(Date.now() - 30 * 86_400_000));
 * ```
 */
export interface MetricsStore {
  /** Adds increments to the stored buckets (creating missing ones), in one transaction. */
  addBuckets(deltas: readonly MetricsBucket[]): Promise<void>;
  /** Every bucket starting at or after `sinceMs`, ordered by pool then start. */
  loadBuckets(sinceMs: number): Promise<MetricsBucket[]>;
  /** Deletes buckets starting before `ms` (of one pool when given); returns how many went. */
  pruneBefore(ms: number, pool?: string): Promise<number>;
  /** Deletes every bucket of a pool; returns how many went. */
  deletePool(pool: string): Promise<number>;
}
