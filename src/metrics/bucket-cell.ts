import type { MetricCounts, MetricsBucket } from "./types.js";

/**
 * The live, mutable bucket the meters write into. Never handed out: callers get
 * {@link BucketCell.snapshot} copies, so nobody outside can corrupt the counts. Every field is
 * set in the constructor so all cells share one hidden class and increments stay monomorphic.
 */
export class BucketCell implements MetricsBucket {
  requests = 0;
  admitted = 0;
  queued = 0;
  rejected = 0;
  timedOut = 0;
  throttled = 0;
  released = 0;
  /** Sums of ms, which soon hold doubles: they start as doubles (see the constructor). */
  queueWaitMs = Number.NaN;
  holdMs = Number.NaN;
  /** Changed since the last drain; flips once per drain so the dirty log gets one entry. */
  dirty = false;

  constructor(
    readonly pool: string,
    readonly start: number,
  ) {
    // NaN above made these fields doubles; 0 keeps them so. A field that turns from small
    // integer to double later changes the hidden class of every cell, which throws away the
    // optimised code of the meters.
    this.queueWaitMs = 0;
    this.holdMs = 0;
  }

  snapshot(): MetricsBucket {
    return {
      pool: this.pool,
      start: this.start,
      requests: this.requests,
      admitted: this.admitted,
      queued: this.queued,
      rejected: this.rejected,
      timedOut: this.timedOut,
      throttled: this.throttled,
      released: this.released,
      queueWaitMs: this.queueWaitMs,
      holdMs: this.holdMs,
    };
  }

  /** Overwrites the counts (loading persisted history replaces, it does not add). */
  assign(counts: MetricCounts): void {
    this.requests = counts.requests;
    this.admitted = counts.admitted;
    this.queued = counts.queued;
    this.rejected = counts.rejected;
    this.timedOut = counts.timedOut;
    this.throttled = counts.throttled;
    this.released = counts.released;
    this.queueWaitMs = counts.queueWaitMs;
    this.holdMs = counts.holdMs;
  }

  /** Adds `counts` to this cell's (counts another process recorded for the same minute). */
  add(counts: MetricCounts): void {
    this.requests += counts.requests;
    this.admitted += counts.admitted;
    this.queued += counts.queued;
    this.rejected += counts.rejected;
    this.timedOut += counts.timedOut;
    this.throttled += counts.throttled;
    this.released += counts.released;
    this.queueWaitMs += counts.queueWaitMs;
    this.holdMs += counts.holdMs;
  }

  addTo(sum: MetricCounts): void {
    sum.requests += this.requests;
    sum.admitted += this.admitted;
    sum.queued += this.queued;
    sum.rejected += this.rejected;
    sum.timedOut += this.timedOut;
    sum.throttled += this.throttled;
    sum.released += this.released;
    sum.queueWaitMs += this.queueWaitMs;
    sum.holdMs += this.holdMs;
  }
}
