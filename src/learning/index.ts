export { parseAnthropicHeaders } from "./dialects/anthropic.js";
export { parseIetfHeaders } from "./dialects/ietf.js";
export { parseOpenAiHeaders } from "./dialects/openai.js";
export { parseRetryAfter } from "./dialects/retry-after.js";
export { parseXRateLimitHeaders } from "./dialects/x-ratelimit.js";
export { collectRateHeaders, type HeaderLookup } from "./header-lookup.js";
export {
  initialLearnerState,
  type LearnContext,
  type LearnerState,
  learn,
  MAX_PAUSE_MS,
  toLearnedLimits,
  withoutConcurrency,
} from "./learner.js";
export { type LearnerStatus, learnerStatus } from "./learner-status.js";
export {
  HeaderValueSchema,
  OutcomeReportSchema,
  RateInfoSchema,
  validateOutcomeReport,
} from "./outcome-schema.js";
export { type ParsedRateHeaders, parseRateLimitHeaders } from "./parse-headers.js";
export { parseOutcome } from "./parse-outcome.js";
export {
  mayProbe,
  NO_BACKOFF,
  nextProbeAt,
  PROBE_FACTOR,
  PROBE_SUCCESS_CAP,
  PROBE_WAIT_BASE_MS,
  PROBE_WAIT_CAP_MS,
  type ProbeBackoff,
  probeFailed,
  probeWaitMs,
  QUIET_RESET_MS,
  type ReportedCapacity,
  reportedCapacity,
  reportsMoreRoom,
  successesToProbe,
} from "./probe-backoff.js";
export type { HeadersLike, OutcomeReport, ParsedOutcome, RateInfo } from "./types.js";
export { MAX_DURATION_MS } from "./values.js";
