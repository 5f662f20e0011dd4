import { BucketCell } from "./bucket-cell.js";
import type { DirtyLog } from "./dirty-log.js";
import type { PoolSeries } from "./pool-series.js";
import type { MetricsObserver } from "./types.js";

/**
 * Records one pool's events into per-minute buckets. The governor caches one per pool
 * (from {@link MetricsRecorder.forPool}) and calls it on every acquire and release, so each
 * call is O(1) and allocation-free: the meter keeps the current bucket and its bounds, and
 * only when `now` leaves them (a new minute, or a clock step back) does it look a bucket up
 * or create one. `now` is the governor clock's epoch ms.
 *
 * After {@link MetricsRecorder.removePool} a meter obtained earlier is detached: it accepts
 * calls and records nothing. Call `forPool` again for a live one.
 *
 * @example
 * ```ts
 * const meter = recorder.forPool("llm");
 * meter.request(clock.now());
 * meter.admitted(clock.now(), 0);
 * meter.released(clock.now(), 1_250);
 * ```
 */
export class PoolMeter {
  readonly pool: string;
  private cell: BucketCell;
  /** Bounds of `cell`; an empty window (start > end) forces the next event to look up. */
  private windowStart = Number.POSITIVE_INFINITY;
  private windowEnd = Number.NEGATIVE_INFINITY;
  private detached = false;

  /** Created by {@link MetricsRecorder.forPool}; not meant to be constructed directly. */
  constructor(
    private readonly series: PoolSeries,
    private readonly dirtyLog: DirtyLog,
    private readonly bucketMs: number,
    private observer?: MetricsObserver | undefined,
  ) {
    this.pool = series.pool;
    this.cell = new BucketCell(series.pool, 0);
  }

  /** An acquire attempt. */
  request(now: number): void {
    this.cellAt(now).requests++;
  }

  /** An attempt got a slot; `queueWaitMs` is 0 when admitted at once. */
  admitted(now: number, queueWaitMs: number): void {
    const cell = this.cellAt(now);
    cell.admitted++;
    cell.queueWaitMs += queueWaitMs;
    this.observer?.admitted?.(this.pool, queueWaitMs);
  }

  /** An attempt had to wait in the queue (counted when it starts waiting). */
  queued(now: number): void {
    this.cellAt(now).queued++;
  }

  /** An attempt was turned away at once (429-type). */
  rejected(now: number): void {
    this.cellAt(now).rejected++;
  }

  /** A waiter waited its whole wait budget. */
  timedOut(now: number): void {
    this.cellAt(now).timedOut++;
  }

  /** The upstream answered 429 `count` times (reported at release). */
  throttled(now: number, count: number): void {
    this.cellAt(now).throttled += count;
    this.observer?.throttled?.(this.pool, count);
  }

  /** A slot was released after being held `holdMs`. */
  released(now: number, holdMs: number): void {
    const cell = this.cellAt(now);
    cell.released++;
    cell.holdMs += holdMs;
    this.observer?.released?.(this.pool, holdMs);
  }

  /** @internal Called by the recorder after pruning so the meter does not write into a dropped bucket. */
  forgetBucketsBefore(start: number): void {
    if (this.detached || this.windowStart >= start) return;
    this.windowStart = Number.POSITIVE_INFINITY;
    this.windowEnd = Number.NEGATIVE_INFINITY;
  }

  /** @internal Called by the recorder on `removePool`: later events go to a private scratch cell. */
  detach(): void {
    this.detached = true;
    this.observer = undefined;
    this.cell = new BucketCell(this.pool, 0);
    // Already dirty, so it never enters the dirty log; the infinite window never rotates.
    this.cell.dirty = true;
    this.windowStart = Number.NEGATIVE_INFINITY;
    this.windowEnd = Number.POSITIVE_INFINITY;
  }

  private cellAt(now: number): BucketCell {
    if (now >= this.windowEnd || now < this.windowStart) this.rotate(now);
    const cell = this.cell;
    if (!cell.dirty) this.dirtyLog.mark(cell);
    return cell;
  }

  private rotate(now: number): void {
    const start = Math.floor(now / this.bucketMs) * this.bucketMs;
    this.cell = this.series.cellAt(start);
    this.windowStart = start;
    this.windowEnd = start + this.bucketMs;
  }
}
