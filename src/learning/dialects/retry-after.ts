import { type HeaderLookup, readField } from "../header-lookup.js";
import { boundedDuration, parseDateToMs, parseDecimal, parseSecondsToMs } from "../values.js";

/**
 * The upstream's retry hint in ms: `retry-after-ms` (OpenAI, sub-second precision) wins over
 * `Retry-After`, which is delta seconds or an HTTP-date (a date already past yields 0).
 *
 * @example
 * ```ts
 * parseRetryAfter(new Map([["retry-after", "20"]]), Date.now()); // 20000
 * ```
 */
export function parseRetryAfter(headers: HeaderLookup, nowMs: number): number | null {
  return (
    readField(headers, "retry-after-ms", parseMillis) ??
    readField(headers, "retry-after", parseRetryAfterValue, nowMs) ??
    null
  );
}

function parseMillis(value: string): number | undefined {
  const millis = parseDecimal(value);
  return millis === undefined ? undefined : boundedDuration(millis);
}

function parseRetryAfterValue(value: string, nowMs: number): number | undefined {
  return parseSecondsToMs(value) ?? parseDateToMs(value, nowMs);
}
