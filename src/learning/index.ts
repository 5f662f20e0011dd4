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
  PROBE_FACTOR,
  toLearnedLimits,
} from "./learner.js";
export {
  HeaderValueSchema,
  OutcomeReportSchema,
  RateInfoSchema,
  validateOutcomeReport,
} from "./outcome-schema.js";
export { type ParsedRateHeaders, parseRateLimitHeaders } from "./parse-headers.js";
export { parseOutcome } from "./parse-outcome.js";
export type { HeadersLike, OutcomeReport, ParsedOutcome, RateInfo } from "./types.js";
export { MAX_DURATION_MS } from "./values.js";
