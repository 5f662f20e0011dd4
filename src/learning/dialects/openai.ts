import { type HeaderLookup, readField } from "../header-lookup.js";
import { compactRateInfo, MINUTE_MS } from "../rate-info.js";
import type { RateInfo } from "../types.js";
import { parseCount, parseGoDurationToMs } from "../values.js";

/**
 * OpenAI (and OpenAI-compatible hosts such as Groq): `x-ratelimit-{limit,remaining,reset}-
 * {requests,tokens}`, resets as Go durations ("6m0s"). Request limits are per minute.
 *
 * @example
 * ```ts
 * parseOpenAiHeaders(new Map([["x-ratelimit-limit-requests", "500"]]));
 * // → { limit: 500, windowMs: 60000 }
 * ```
 */
export function parseOpenAiHeaders(headers: HeaderLookup): RateInfo | null {
  const limit = readField(headers, "x-ratelimit-limit-requests", parseCount);
  return compactRateInfo({
    limit,
    windowMs: limit === undefined ? undefined : MINUTE_MS,
    remaining: readField(headers, "x-ratelimit-remaining-requests", parseCount),
    resetMs: readField(headers, "x-ratelimit-reset-requests", parseGoDurationToMs),
    tokenLimit: readField(headers, "x-ratelimit-limit-tokens", parseCount),
    tokenRemaining: readField(headers, "x-ratelimit-remaining-tokens", parseCount),
    tokenResetMs: readField(headers, "x-ratelimit-reset-tokens", parseGoDurationToMs),
  });
}
