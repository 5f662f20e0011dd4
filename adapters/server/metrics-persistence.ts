import type { CatalogStore } from "../../src/catalog/types.js";
import type { Clock, TimerHandle } from "../../src/clock/clock.js";
import type { MetricsStore } from "../../src/metrics/metrics-store.js";
import type { MetricsRecorder } from "../../src/metrics/recorder.js";
import { METRIC_COUNT_FIELDS, type MetricsBucket } from "../../src/metrics/types.js";

const DAY_MS = 86_400_000;
/** Retention when no pool says otherwise (the apply file's default). */
const DEFAULT_RETENTION_DAYS = 30;
/** Pruning deletes rows; once an hour keeps it off the flush path. */
const PRUNE_EVERY_MS = 3_600_000;
/**
 * How far back each flush reads the stored buckets for other servers' counts: the minutes
 * they still write into (a flush every few seconds, a slot held for minutes counts at its
 * release). Counts a server writes later than that into older minutes (after a long database
 * outage) reach the others' figures at their next start.
 */
export const FOLD_LOOKBACK_MS = 15 * 60_000;

/**
 * Moves metrics between the in-memory recorder and the database on a schedule. Operations
 * run one at a time (a flush never overlaps another: each writes the increments since the
 * one before).
 */
export interface MetricsPersistence {
  /**
   * Loads persisted buckets within retention into the recorder; returns how many. Only buckets
   * of pools in the catalog that do not end before the pool was created: a subdomain may have
   * belonged to a deleted pool (maybe another team's) whose history is not the new pool's.
   */
  load(): Promise<number>;
  /**
   * Saves every bucket changed since the last flush, then adds to the recorder what other
   * servers on the same database stored meanwhile in the last {@link FOLD_LOOKBACK_MS} (so
   * every server's metrics API and dashboard show the fleet's counts); returns how many
   * buckets were written.
   */
  flush(): Promise<number>;
  /**
   * Drops buckets older than the longest pool retention, in memory and on disk, and on disk
   * each pool's buckets older than its own retention.
   */
  prune(): Promise<number>;
  /**
   * Forgets a pool deleted from the governor: its meter, its buckets in memory and on disk.
   * Call after `governor.removePool`, so no live meter is detached.
   */
  forgetPool(pool: string): Promise<number>;
  /** Flushes every `intervalMs` (and prunes hourly) until {@link MetricsPersistence.stop}. */
  start(intervalMs: number): void;
  stop(): void;
}

/** Options of {@link createMetricsPersistence}. */
export interface MetricsPersistenceOptions {
  recorder: MetricsRecorder;
  store: MetricsStore;
  /** Pools carry their retention (`metricsRetentionDays`); the longest one wins. */
  catalog: Pick<CatalogStore, "listAllPools">;
  clock: Clock;
  log?: (line: string) => void;
  /**
   * Whether other servers may write to the same store (default true): then each flush reads
   * back their counts. A server that serves its catalog alone (slots in memory, held by the
   * serving lock) skips that read.
   */
  sharedStore?: boolean;
}

/**
 * Persistence of the governor's metrics: `drainDirty → addBuckets` (the increments since the
 * last flush, so several servers on one data directory add up) every flush interval, load
 * within retention at start, prune past retention: on disk each pool's own, in memory
 * the longest of any pool (summaries clamp each pool's range to its own retention anyway).
 *
 * @example
 * ```ts
 * const persistence = createMetricsPersistence({ recorder: governor.metrics, store, catalog: catalog.store, clock });
 * await persistence.load();
 * persistence.start(5_000);
 * ```
 */
export function createMetricsPersistence(options: MetricsPersistenceOptions): MetricsPersistence {
  const { recorder, store, catalog, clock } = options;
  const log = options.log ?? (() => {});
  let timer: TimerHandle | null = null;
  let lastPruneAt = Number.NEGATIVE_INFINITY;
  // What this process last wrote or loaded per bucket, so a flush writes only the increments
  // since (several servers on one data directory each add their own counts).
  const saved = new Map<string, MetricsBucket>();
  // Increments not written yet (a failed write keeps them for the next flush).
  const pending = new Map<string, MetricsBucket>();
  const forgetSaved = (keep: (bucket: MetricsBucket) => boolean) => {
    for (const [key, bucket] of saved) if (!keep(bucket)) saved.delete(key);
  };

  const retentionStart = (pools: readonly { metricsRetentionDays: number }[]) => {
    const days = pools.reduce((longest, pool) => Math.max(longest, pool.metricsRetentionDays), 0);
    return clock.now() - (days > 0 ? days : DEFAULT_RETENTION_DAYS) * DAY_MS;
  };

  // Whole buckets only, as the recorder prunes: the bucket holding a cutoff stays.
  const bucketStart = (ms: number) => Math.floor(ms / recorder.bucketMs) * recorder.bucketMs;

  let running: Promise<unknown> = Promise.resolve();
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const next = running.then(work, work);
    running = next.catch(() => {});
    return next;
  };

  async function flush(): Promise<number> {
    for (const bucket of recorder.drainDirty()) {
      const key = bucketKey(bucket);
      const delta = difference(bucket, saved.get(key));
      saved.set(key, bucket);
      const waiting = pending.get(key);
      pending.set(key, waiting ? sum(waiting, delta) : delta);
    }
    const deltas = [...pending.values()];
    if (deltas.length > 0) {
      await store.addBuckets(deltas);
      pending.clear();
    }
    if (options.sharedStore !== false) await foldOthers();
    return deltas.length;
  }

  /**
   * Adds to the recorder what the stored buckets hold beyond what this process wrote or
   * loaded: other servers' counts. Stored minus known, where known is `saved` less what is
   * still `pending` (not in the database yet).
   */
  async function foldOthers(): Promise<void> {
    const stored = await store.loadBuckets(bucketStart(clock.now() - FOLD_LOOKBACK_MS));
    let createdAt: Map<string, number> | null = null;
    for (const bucket of stored) {
      const key = bucketKey(bucket);
      const known = saved.get(key);
      const waiting = pending.get(key);
      if (!known) {
        // A bucket this process never had: as at load, only the current pool's own (rows of
        // a deleted pool whose subdomain was taken again may still be stored).
        createdAt ??= new Map(
          (await catalog.listAllPools()).map((pool) => [pool.subdomain, pool.createdAt]),
        );
        const poolCreatedAt = createdAt.get(bucket.pool);
        if (poolCreatedAt === undefined || bucket.start + recorder.bucketMs <= poolCreatedAt) {
          continue;
        }
      }
      const others = difference(waiting ? sum(bucket, waiting) : bucket, known);
      const counts = METRIC_COUNT_FIELDS.map((name) => others[name]);
      // Nothing new, or less than this process wrote: rows deleted or pruned meanwhile (a
      // pool removed through another server), which the catalog sync handles here too.
      if (counts.every((count) => count === 0) || counts.some((count) => count < 0)) continue;
      if (!recorder.addCounts(others)) continue;
      saved.set(key, known ? sum(known, others) : others);
    }
  }

  const persistence: MetricsPersistence = {
    load: () =>
      serialized(async () => {
        const pools = await catalog.listAllPools();
        const createdAt = new Map(pools.map((pool) => [pool.subdomain, pool.createdAt]));
        const buckets = (await store.loadBuckets(retentionStart(pools))).filter((bucket) => {
          const poolCreatedAt = createdAt.get(bucket.pool);
          // The bucket of the creation minute stays: it holds the new pool's first events.
          return poolCreatedAt !== undefined && bucket.start + recorder.bucketMs > poolCreatedAt;
        });
        recorder.load(buckets);
        for (const bucket of buckets) saved.set(bucketKey(bucket), bucket);
        return buckets.length;
      }),
    flush: () => serialized(flush),
    prune: () =>
      serialized(async () => {
        const now = clock.now();
        lastPruneAt = now;
        const pools = await catalog.listAllPools();
        const cutoff = bucketStart(retentionStart(pools));
        recorder.prune(cutoff);
        forgetSaved((bucket) => bucket.start >= cutoff);
        let pruned = await store.pruneBefore(cutoff);
        // On disk each pool keeps only its own retention (in memory the longest applies to all;
        // reads clamp each pool to its own anyway).
        for (const pool of pools) {
          const poolCutoff = bucketStart(now - pool.metricsRetentionDays * DAY_MS);
          if (poolCutoff > cutoff) pruned += await store.pruneBefore(poolCutoff, pool.subdomain);
        }
        return pruned;
      }),
    forgetPool(pool) {
      recorder.removePool(pool);
      return serialized(async () => {
        // Buckets counted since the last flush come out of the next drain; save them first so
        // the delete below removes them too, rather than a later flush writing them back.
        await flush();
        forgetSaved((bucket) => bucket.pool !== pool);
        return store.deletePool(pool);
      });
    },
    start(intervalMs) {
      const tick = async () => {
        try {
          await persistence.flush();
          if (clock.now() - lastPruneAt >= PRUNE_EVERY_MS) await persistence.prune();
        } catch (error) {
          log(`Saving metrics failed: ${(error as Error).message}`);
        }
        if (timer !== null) timer = clock.setTimeout(tick, intervalMs);
      };
      timer = clock.setTimeout(tick, intervalMs);
    },
    stop() {
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
    },
  };
  return persistence;
}

function bucketKey(bucket: MetricsBucket): string {
  return `${bucket.pool}\u0000${bucket.start}`;
}

/** `bucket` minus what was saved of it before (all of it when nothing was). */
function difference(bucket: MetricsBucket, before: MetricsBucket | undefined): MetricsBucket {
  const delta: MetricsBucket = { ...bucket };
  if (!before) return delta;
  for (const name of METRIC_COUNT_FIELDS) delta[name] = bucket[name] - before[name];
  return delta;
}

function sum(a: MetricsBucket, b: MetricsBucket): MetricsBucket {
  const total: MetricsBucket = { ...a };
  for (const name of METRIC_COUNT_FIELDS) total[name] = a[name] + b[name];
  return total;
}
