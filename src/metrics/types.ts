/**
 * Counters of one pool over one span of time. Every field only grows while the span is live.
 *
 * - `requests`: acquire attempts.
 * - `admitted`: attempts that got a slot (at once or after queueing).
 * - `queued`: attempts that had to wait in the queue (whatever the wait's outcome).
 * - `rejected`: attempts turned away at once (429-type).
 * - `timedOut`: waiters that waited their whole wait budget.
 * - `throttled`: upstream 429s reported at release.
 * - `released`: slots released.
 * - `queueWaitMs`: sum of milliseconds admitted waiters spent queued.
 * - `holdMs`: sum of milliseconds slots were held.
 *
 * @example
 * ```ts
 * const counts: MetricCounts = recorder.totals("llm", hourAgo, now);
 * const meanWaitMs = counts.admitted === 0 ? 0 : counts.queueWaitMs / counts.admitted;
 * ```
 */
export interface MetricCounts {
  requests: number;
  admitted: number;
  queued: number;
  rejected: number;
  timedOut: number;
  throttled: number;
  released: number;
  queueWaitMs: number;
  holdMs: number;
}

/**
 * The counts of one pool in one time bucket: the unit a persistence adapter stores (one row
 * per `pool` + `start`).
 *
 * @example
 * ```ts
 * for (const bucket of recorder.drainDirty()) upsertRow(bucket.pool, bucket.start, bucket);
 * ```
 */
export interface MetricsBucket extends MetricCounts {
  /** The pool counted. */
  pool: string;
  /** epoch ms, multiple of bucketMs */
  start: number;
}

/**
 * Sees single events the buckets keep only as sums, for histograms elsewhere (a Prometheus
 * exporter). Called synchronously on the governor's hot path: keep it cheap, never throw.
 *
 * @example
 * ```ts
 * const recorder = new MetricsRecorder({ observer: { released: (pool, holdMs) => holds.observe(holdMs / 1000) } });
 * ```
 */
export interface MetricsObserver {
  /** An attempt got a slot after `queueWaitMs` in the queue (0: at once). */
  admitted?(pool: string, queueWaitMs: number): void;
  /** The upstream answered 429 `count` times (reported at release). */
  throttled?(pool: string, count: number): void;
  /** A slot was released after being held `holdMs`. */
  released?(pool: string, holdMs: number): void;
}

/**
 * The names of every {@link MetricCounts} field, in a stable order: lets an adapter derive
 * its columns and statements without repeating the list.
 *
 * @example
 * ```ts
 * const columns = METRIC_COUNT_FIELDS.join(", ");
 * ```
 */
export const METRIC_COUNT_FIELDS = [
  "requests",
  "admitted",
  "queued",
  "rejected",
  "timedOut",
  "throttled",
  "released",
  "queueWaitMs",
  "holdMs",
] as const satisfies readonly (keyof MetricCounts)[];

/**
 * All-zero counts.
 *
 * @example
 * ```ts
 * const sum = emptyMetricCounts();
 * ```
 */
export function emptyMetricCounts(): MetricCounts {
  return {
    requests: 0,
    admitted: 0,
    queued: 0,
    rejected: 0,
    timedOut: 0,
    throttled: 0,
    released: 0,
    queueWaitMs: 0,
    holdMs: 0,
  };
}
