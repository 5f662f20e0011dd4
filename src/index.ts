/**
 * Sluice: a concurrency governor for calls to upstream services.
 *
 * @example
 * ```ts
 * import { createGovernor } from "sluice";
 * const governor = createGovernor();
 * await governor.definePool("openai", { maxConcurrent: 8, rpm: 500 });
 * const response = await governor.fetch("openai", "https://api.openai.com/v1/models");
 * ```
 * @packageDocumentation
 */

export * from "./access-log/index.js";
export { SecretUnreadableError } from "./catalog/encryption.js";
export type { Clock, TimerHandle } from "./clock/clock.js";
export { systemClock } from "./clock/clock.js";
export * from "./errors.js";
export { createGovernor } from "./governor/create-governor.js";
export type { BudgetSettings, PoolSettings, PoolSettingsInput } from "./governor/settings.js";
export {
  BudgetSettingsSchema,
  MAX_RPM,
  MAX_SETTING_MS,
  POOL_DEFAULTS,
  PoolSettingsSchema,
  parsePoolSettings,
} from "./governor/settings.js";
export type {
  AcquireOptions,
  Governor,
  GovernorOptions,
  PoolStatus,
  RunContext,
  SlotGrant,
} from "./governor/types.js";
export type { LearnerStatus } from "./learning/learner-status.js";
export { parseRateLimitHeaders } from "./learning/parse-headers.js";
export {
  OutcomeReportSchema,
  parseOutcome,
  validateOutcomeReport,
} from "./learning/parse-outcome.js";
export type { HeadersLike, OutcomeReport, ParsedOutcome, RateInfo } from "./learning/types.js";
export type { MetricsRecorderOptions } from "./metrics/recorder.js";
export { MetricsRecorder } from "./metrics/recorder.js";
export type { MetricCounts, MetricsBucket, MetricsObserver } from "./metrics/types.js";
export * from "./policies/index.js";
export * from "./signing/index.js";
export { MemorySlotStore } from "./store/memory-store.js";
export type * from "./store/types.js";
