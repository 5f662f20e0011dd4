export type { MetricsStore } from "./metrics-store.js";
export { PoolMeter } from "./pool-meter.js";
export type { MetricsRecorderOptions } from "./recorder.js";
export { MetricsRecorder } from "./recorder.js";
export type { MetricsRange, PoolMetricsSummary, SummarizePoolMetricsArgs } from "./summary.js";
export { summarizePoolMetrics } from "./summary.js";
export type { MetricCounts, MetricsBucket, MetricsObserver } from "./types.js";
export { emptyMetricCounts, METRIC_COUNT_FIELDS } from "./types.js";
