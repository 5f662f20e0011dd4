import { parseRateLimitHeaders } from "./parse-headers.js";
import type { OutcomeReport, ParsedOutcome, RateInfo } from "./types.js";
import { MAX_DURATION_MS } from "./values.js";

export { OutcomeReportSchema, validateOutcomeReport } from "./outcome-schema.js";

const RATE_FIELDS: readonly (keyof RateInfo)[] = [
  "limit",
  "remaining",
  "resetMs",
  "windowMs",
  "tokenLimit",
  "tokenRemaining",
  "tokenResetMs",
];

/**
 * Turns a release outcome report into what the learner consumes. `headers` are parsed in
 * every known dialect; fields present in `rate` override those read from headers; the
 * report's `retryAfterMs` wins over header hints. `throttled` is true for a 429 status or a
 * `throttled` count above 0. Values out of range (a status outside 100-599, a negative or
 * non-finite number, a `throttled` that is no whole count up to 2^53 − 1, a duration beyond
 * 10 years, a window of 0) are ignored, so an unvalidated report is safe too.
 *
 * @param nowMs Epoch ms that dates and epoch resets in headers are measured from.
 * @example
 * ```ts
 * parseOutcome({ status: 429, headers: { "retry-after": "2" } }, clock.now());
 * // → { status: 429, throttled: true, retryAfterMs: 2000, rate: null }
 * ```
 */
export function parseOutcome(report: OutcomeReport, nowMs: number): ParsedOutcome {
  const fromHeaders = report.headers == null ? null : parseRateLimitHeaders(report.headers, nowMs);
  const status = isHttpStatus(report.status) ? report.status : null;
  const throttledCount = isCount(report.throttled) ? report.throttled : 0;
  return {
    status,
    throttled: status === 429 || throttledCount > 0,
    retryAfterMs: isDuration(report.retryAfterMs)
      ? report.retryAfterMs
      : (fromHeaders?.retryAfterMs ?? null),
    rate: overrideRate(fromHeaders?.rate ?? null, report.rate),
  };
}

function overrideRate(
  fromHeaders: RateInfo | null,
  reported: RateInfo | undefined,
): RateInfo | null {
  if (reported == null || typeof reported !== "object") return fromHeaders;
  // The header result is this call's own object, so it can be written in place.
  let rate = fromHeaders;
  for (const field of RATE_FIELDS) {
    const value = reported[field];
    if (!isRateValue(field, value)) continue;
    rate ??= {};
    rate[field] = value;
  }
  return rate;
}

function isRateValue(field: keyof RateInfo, value: unknown): value is number {
  if (field === "windowMs") return isDuration(value) && value > 0;
  if (field === "resetMs" || field === "tokenResetMs") return isDuration(value);
  return isNonNegative(value);
}

function isHttpStatus(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 100 && (value as number) <= 599;
}

/**
 * A whole count that stays exact (0 to 2^53 − 1), as the report schema requires of `throttled`.
 *
 * @example
 * ```ts
 * isCount(3); // true
 * isCount(1e300); // false
 * ```
 */
export function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function isNonNegative(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

function isDuration(value: unknown): value is number {
  return isNonNegative(value) && value <= MAX_DURATION_MS;
}
