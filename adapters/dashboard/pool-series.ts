import type { MetricsRecorder } from "../../src/metrics/recorder.js";

/** Chart ranges the pool page offers. */
export const CHART_RANGES = { hour: 3_600_000, day: 86_400_000, week: 604_800_000 } as const;
/** A chart range name: hour, day or week. */
export type ChartRange = keyof typeof CHART_RANGES;

/** The range a query asks for; the last hour for anything else. */
export function chartRangeOf(text: string | undefined): ChartRange {
  return text === "day" || text === "week" ? text : "hour";
}

/** Per-minute series for uPlot: x in epoch seconds, one array per count, minutes without traffic as 0. */
export interface PoolSeries {
  time: number[];
  requests: number[];
  admitted: number[];
  queued: number[];
  rejected: number[];
}

/**
 * The pool's requests / admitted / queued / rejected per bucket over the range, cut to the
 * pool's metrics retention.
 *
 * @example
 * ```ts
 * poolSeries(metrics, "llm", "hour", 30, Date.now()).time.length; // 61
 * ```
 */
export function poolSeries(
  metrics: MetricsRecorder,
  pool: string,
  range: ChartRange,
  retentionDays: number,
  now: number,
): PoolSeries {
  const width = metrics.bucketMs;
  const span = Math.min(CHART_RANGES[range], retentionDays * 86_400_000);
  const from = Math.floor((now - span) / width) * width;
  const byStart = new Map(
    metrics.buckets(pool, from, now + 1).map((bucket) => [bucket.start, bucket]),
  );
  const series: PoolSeries = { time: [], requests: [], admitted: [], queued: [], rejected: [] };
  for (let start = from; start <= now; start += width) {
    const bucket = byStart.get(start);
    series.time.push(start / 1000);
    series.requests.push(bucket?.requests ?? 0);
    series.admitted.push(bucket?.admitted ?? 0);
    series.queued.push(bucket?.queued ?? 0);
    series.rejected.push(bucket?.rejected ?? 0);
  }
  return series;
}
