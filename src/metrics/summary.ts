import { InvalidArgumentError } from "../errors.js";
import type { MetricsRecorder } from "./recorder.js";
import { emptyMetricCounts } from "./types.js";

const DAY_MS = 86_400_000;

/**
 * The effective range of a {@link PoolMetricsSummary} (the contract's MetricsRange). `from` and
 * `to` are always ISO strings here: the effective range is always known, so null never appears.
 *
 * @example
 * ```ts
 * const range: MetricsRange = { from: "2025-01-01T00:00:00.000Z", to: "2025-01-31T00:00:00.000Z", retention_days: 30, clamped: false };
 * ```
 */
export interface MetricsRange {
  from: string | null;
  to: string | null;
  retention_days: number;
  clamped: boolean;
}

/**
 * The contract's PoolMetricsSummary (body of `GET /api/v1/pools/{pool}/metrics`).
 *
 * @example
 * ```ts
 * const body: PoolMetricsSummary = summarizePoolMetrics({ recorder, pool: "llm", poolId: 7, now, retentionDays: 30 });
 * ```
 */
export interface PoolMetricsSummary {
  pool_id: number;
  requests: number;
  admitted: number;
  admit_rate: number;
  queued_count: number;
  queued_pct: number;
  range: MetricsRange;
}

/** Arguments of {@link summarizePoolMetrics}. */
export interface SummarizePoolMetricsArgs {
  recorder: MetricsRecorder;
  /** Pool name as the recorder knows it. */
  pool: string;
  /** The contract's numeric pool id, echoed as `pool_id`. */
  poolId: number;
  /** Epoch ms (the governor's clock). */
  now: number;
  /** Retention window in whole days (a positive integer). */
  retentionDays: number;
  from?: Date | null;
  to?: Date | null;
}

/**
 * Builds the contract's PoolMetricsSummary for one pool.
 *
 * Range rules:
 * - Missing `from` means the retention start (`now − retentionDays`); missing `to` means `now`.
 * - Each given bound is clamped into `[now − retentionDays, now]`: a `from` before the
 *   retention start moves up to it, a `to` after now moves down to now, and a window wholly
 *   outside retention collapses onto the nearest edge. `range.clamped` is true when any given
 *   bound moved; defaults never set it.
 * - `from` later than `to` (both given) or an invalid Date throws `InvalidArgumentError`;
 *   validating the query is the caller's job, this is the last guard.
 *
 * Counting rules (minute granularity, the recorder's bucket width):
 * - The range is half-open, `[from, to)`; a bucket counts in full when it overlaps it, i.e.
 *   when its start lies in `[from rounded down to the bucket, to)`. So a range that starts
 *   or ends mid-minute includes that whole minute.
 * - When `to` is now, the bucket in progress counts in full, including events stamped
 *   exactly `now`.
 * - An empty effective range (`from` equal to `to`, e.g. after collapsing) counts nothing.
 * - `range.from` / `range.to` (ISO strings, never null) are the window the counts cover:
 *   `from` rounded down to its minute, `to` rounded up to its minute but never past now. A
 *   request for 12:00:30-12:01:10 answers with the range 12:00:00-12:02:00, so the counts
 *   and the range they are reported for always agree.
 *
 * Rates: `admit_rate = admitted / requests` and `queued_pct = 100 × queued / requests`,
 * both 0 when there were no requests, rounded to 4 decimals.
 *
 * @example
 * ```ts
 * const summary = summarizePoolMetrics({
 *   recorder: governor.metrics, pool: "llm", poolId: 7, now: clock.now(), retentionDays: 30,
 *   from: new Date("2025-01-01T00:00:00Z"),
 * });
 * // { pool_id: 7, requests, admitted, admit_rate, queued_count, queued_pct, range: { … } }
 * ```
 */
export function summarizePoolMetrics(args: SummarizePoolMetricsArgs): PoolMetricsSummary {
  const { recorder, pool, poolId, now, retentionDays } = args;
  checkArguments(args);
  const retentionStart = now - retentionDays * DAY_MS;
  const requestedFrom = args.from?.getTime() ?? null;
  const requestedTo = args.to?.getTime() ?? null;
  const from = clampInto(requestedFrom ?? retentionStart, retentionStart, now);
  const to = clampInto(requestedTo ?? now, retentionStart, now);
  const clamped =
    (requestedFrom !== null && requestedFrom !== from) ||
    (requestedTo !== null && requestedTo !== to);
  const empty = from === to;
  const counts = empty
    ? emptyMetricCounts()
    : recorder.totals(pool, from, to === now ? now + 1 : to);
  // The window the whole buckets counted cover (see "Counting rules").
  const bucketMs = recorder.bucketMs;
  const countedFrom = empty ? from : Math.floor(from / bucketMs) * bucketMs;
  const countedTo = empty ? to : Math.min(Math.ceil(to / bucketMs) * bucketMs, now);
  return {
    pool_id: poolId,
    requests: counts.requests,
    admitted: counts.admitted,
    admit_rate: ratio(counts.admitted, counts.requests),
    queued_count: counts.queued,
    queued_pct: ratio(100 * counts.queued, counts.requests),
    range: {
      from: new Date(countedFrom).toISOString(),
      to: new Date(countedTo).toISOString(),
      retention_days: retentionDays,
      clamped,
    },
  };
}

function checkArguments(args: SummarizePoolMetricsArgs): void {
  const issues: string[] = [];
  if (!Number.isFinite(args.now)) issues.push(`now must be a finite epoch ms, got ${args.now}.`);
  if (!Number.isSafeInteger(args.retentionDays) || args.retentionDays < 1) {
    issues.push(`retentionDays must be a positive integer, got ${args.retentionDays}.`);
  }
  const from = args.from?.getTime();
  const to = args.to?.getTime();
  if (Number.isNaN(from)) issues.push("from is an invalid date.");
  if (Number.isNaN(to)) issues.push("to is an invalid date.");
  if (from !== undefined && to !== undefined && from > to) issues.push("from is later than to.");
  if (issues.length > 0) throw new InvalidArgumentError(issues.join(" "), issues);
}

function clampInto(ms: number, lowest: number, highest: number): number {
  return Math.min(Math.max(ms, lowest), highest);
}

function ratio(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000;
}
