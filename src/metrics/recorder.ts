import { InvalidArgumentError } from "../errors.js";
import { DirtyLog } from "./dirty-log.js";
import { PoolMeter } from "./pool-meter.js";
import { PoolSeries } from "./pool-series.js";
import type { MetricCounts, MetricsBucket, MetricsObserver } from "./types.js";
import { emptyMetricCounts, METRIC_COUNT_FIELDS } from "./types.js";

/** Options of {@link MetricsRecorder}. */
export interface MetricsRecorderOptions {
  /** Bucket width in ms (a positive integer); default 60 000 (per-minute buckets). */
  bucketMs?: number;
  /** Also told of single events (for histograms); none by default. */
  observer?: MetricsObserver;
}

const RECORDER_OPTION_KEYS: readonly string[] = ["bucketMs", "observer"];

interface PoolEntry {
  series: PoolSeries;
  meter: PoolMeter;
}

/**
 * In-memory per-pool metrics in fixed-width time buckets (per minute by default). The governor
 * records through the {@link PoolMeter} of each pool; readers ask for totals or buckets over a
 * range; a persistence adapter calls {@link MetricsRecorder.drainDirty} on its own schedule,
 * {@link MetricsRecorder.load} at start-up and {@link MetricsRecorder.prune} to apply retention.
 * The recorder does no I/O and owns no timers.
 *
 * Ranges are bucket-granular: a bucket counts whole when its start lies in
 * `[floor(fromMs), toMs)`, where `floor` rounds down to a bucket boundary.
 *
 * @example
 * ```ts
 * const recorder = new MetricsRecorder();
 * recorder.forPool("llm").request(Date.now());
 * const lastHour = recorder.totals("llm", Date.now() - 3_600_000, Date.now() + 1);
 * ```
 */
export class MetricsRecorder {
  /** Bucket width in ms (60 000 unless set). */
  readonly bucketMs: number;
  private readonly entries = new Map<string, PoolEntry>();
  private readonly dirtyLog = new DirtyLog();
  private readonly observer: MetricsObserver | undefined;

  constructor(options: MetricsRecorderOptions = {}) {
    // As createGovernor's: a misspelt `bucketMS` or `observr` would quietly mean the default.
    for (const key of Object.keys(options ?? {})) {
      if (!RECORDER_OPTION_KEYS.includes(key)) {
        throw new InvalidArgumentError(
          `Unknown MetricsRecorder option "${key.slice(0, 40)}" (known: ${RECORDER_OPTION_KEYS.join(", ")}).`,
        );
      }
    }
    const bucketMs = options.bucketMs ?? 60_000;
    if (!Number.isSafeInteger(bucketMs) || bucketMs < 1) {
      throw new InvalidArgumentError(`bucketMs must be a positive integer, got ${bucketMs}.`);
    }
    this.bucketMs = bucketMs;
    this.observer = options.observer;
  }

  /** The pool's meter; the same instance on every call until `removePool`. */
  forPool(pool: string): PoolMeter {
    return this.entryFor(pool).meter;
  }

  /**
   * Forgets a pool's meter and in-memory buckets. Buckets it changed since the last drain are
   * still returned by the next {@link MetricsRecorder.drainDirty}, so nothing counted is lost
   * to persistence; deleting persisted rows is the adapter's call. A meter obtained earlier is
   * detached and records nothing from now on.
   */
  removePool(pool: string): void {
    const entry = this.entries.get(pool);
    if (entry === undefined) return;
    entry.meter.detach();
    this.entries.delete(pool);
  }

  /**
   * Sums of the buckets whose start is in `[floor(fromMs), toMs)`. Zeros for an unknown pool
   * or when `fromMs > toMs` (or either is NaN). Infinite bounds are allowed.
   */
  totals(pool: string, fromMs: number, toMs: number): MetricCounts {
    const sum = emptyMetricCounts();
    const series = this.entries.get(pool)?.series;
    if (series === undefined || !(fromMs <= toMs)) return sum;
    const cells = series.cells;
    const first = series.firstIndexAtOrAfter(this.floorToBucket(fromMs));
    for (let index = first; index < cells.length; index++) {
      const cell = cells[index]!;
      if (cell.start >= toMs) break;
      cell.addTo(sum);
    }
    return sum;
  }

  /** Copies of the buckets whose start is in `[floor(fromMs), toMs)`, oldest first (same bounds rules as `totals`). */
  buckets(pool: string, fromMs: number, toMs: number): MetricsBucket[] {
    const copies: MetricsBucket[] = [];
    const series = this.entries.get(pool)?.series;
    if (series === undefined || !(fromMs <= toMs)) return copies;
    const cells = series.cells;
    const first = series.firstIndexAtOrAfter(this.floorToBucket(fromMs));
    for (let index = first; index < cells.length; index++) {
      const cell = cells[index]!;
      if (cell.start >= toMs) break;
      copies.push(cell.snapshot());
    }
    return copies;
  }

  /**
   * Copies of every bucket changed since the last drain, each once, in the order they first
   * changed. A bucket changed again after a drain comes back in the next one with its full
   * (cumulative) counts, so the adapter upserts by `pool` + `start` and replaces.
   */
  drainDirty(): MetricsBucket[] {
    return this.dirtyLog.drain();
  }

  /**
   * Restores persisted history. A loaded bucket replaces the in-memory counts of the same
   * `pool` + `start` (events recorded later add to it); loading does not mark buckets dirty.
   * Every bucket is checked before any is applied: a `start` that is not a multiple of
   * `bucketMs` or a count that is not a finite number ≥ 0 throws `InvalidArgumentError`.
   */
  load(buckets: Iterable<MetricsBucket>): void {
    const all = Array.from(buckets);
    const issues = all.flatMap((bucket, index) => this.bucketIssues(bucket, index));
    if (issues.length > 0) {
      throw new InvalidArgumentError(`Cannot load metrics: ${issues[0]}`, issues);
    }
    for (const bucket of all) this.entryFor(bucket.pool).series.cellAt(bucket.start).assign(bucket);
  }

  /**
   * Adds counts other processes recorded (read back from a store they share with this one)
   * to the bucket of `bucket.pool` and `bucket.start`, creating it when missing, so readers
   * see the whole fleet's figures. Not marked dirty: those counts are stored already, and a
   * later drain hands back the cumulative bucket, from which the persistence adapter
   * subtracts what it knows is stored. Returns false, adding nothing, for a pool this
   * recorder has no meter or history for (one not defined here yet, or removed). Throws
   * `InvalidArgumentError` as {@link MetricsRecorder.load} does for a bad bucket.
   */
  addCounts(bucket: MetricsBucket): boolean {
    const issues = this.bucketIssues(bucket, 0);
    if (issues.length > 0) {
      throw new InvalidArgumentError(`Cannot add metrics: ${issues[0]}`, issues);
    }
    const entry = this.entries.get(bucket.pool);
    if (entry === undefined) return false;
    entry.series.cellAt(bucket.start).add(bucket);
    return true;
  }

  /**
   * Drops every bucket that ends at or before `beforeMs` (start + bucketMs ≤ beforeMs), in all
   * pools, and forgets them in the dirty log. Returns how many were dropped.
   */
  prune(beforeMs: number): number {
    const keepFrom = this.floorToBucket(beforeMs);
    let dropped = 0;
    for (const { series, meter } of this.entries.values()) {
      dropped += series.dropBefore(keepFrom);
      meter.forgetBucketsBefore(keepFrom);
    }
    this.dirtyLog.discardBefore(keepFrom);
    return dropped;
  }

  private entryFor(pool: string): PoolEntry {
    let entry = this.entries.get(pool);
    if (entry === undefined) {
      const series = new PoolSeries(pool);
      entry = { series, meter: new PoolMeter(series, this.dirtyLog, this.bucketMs, this.observer) };
      this.entries.set(pool, entry);
    }
    return entry;
  }

  private floorToBucket(ms: number): number {
    return Math.floor(ms / this.bucketMs) * this.bucketMs;
  }

  private bucketIssues(bucket: MetricsBucket, index: number): string[] {
    const issues: string[] = [];
    if (typeof bucket.pool !== "string") issues.push(`bucket ${index}: pool must be a string.`);
    if (!Number.isSafeInteger(bucket.start) || bucket.start % this.bucketMs !== 0) {
      issues.push(`bucket ${index}: start ${bucket.start} is not a multiple of ${this.bucketMs}.`);
    }
    for (const field of METRIC_COUNT_FIELDS) {
      const value = bucket[field];
      if (!Number.isFinite(value) || value < 0) {
        issues.push(`bucket ${index}: ${field} must be a finite number ≥ 0, got ${value}.`);
      }
    }
    return issues;
  }
}
