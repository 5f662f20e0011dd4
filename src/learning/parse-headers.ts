import { parseAnthropicHeaders } from "./dialects/anthropic.js";
import { parseIetfHeaders } from "./dialects/ietf.js";
import { parseOpenAiHeaders } from "./dialects/openai.js";
import { parseRetryAfter } from "./dialects/retry-after.js";
import { parseXRateLimitHeaders } from "./dialects/x-ratelimit.js";
import { collectRateHeaders, type HeaderLookup } from "./header-lookup.js";
import { fillMissingRate } from "./rate-info.js";
import type { HeadersLike, RateInfo } from "./types.js";

/** What {@link parseRateLimitHeaders} found. */
export interface ParsedRateHeaders {
  /** Rate facts from any dialect, or null when none was found. */
  rate: RateInfo | null;
  /** Retry hint in ms (Retry-After, retry-after-ms), or null. */
  retryAfterMs: number | null;
}

type DialectParser = (headers: HeaderLookup, nowMs: number) => RateInfo | null;

/**
 * Most specific first: a vendor's suffixed names say more than the generic family, and the
 * generic `x-ratelimit-*` names are the most ambiguous, so they only fill what is left.
 */
const DIALECTS: readonly DialectParser[] = [
  parseOpenAiHeaders,
  parseAnthropicHeaders,
  parseIetfHeaders,
  parseXRateLimitHeaders,
];

/**
 * Reads rate-limit facts from upstream response headers in every common dialect: OpenAI,
 * Anthropic, the IETF RateLimit drafts, GitHub and the generic `x-ratelimit-*` family, plus
 * `Retry-After` / `retry-after-ms`. Names are case-insensitive; arrays yield their first
 * value. Malformed, negative or absurd values (a duration beyond 10 years) are ignored field
 * by field; this function never throws. When dialects overlap, the first in the order above
 * to state a field wins.
 *
 * @param nowMs Epoch ms that dates and epoch resets are measured from.
 * @example
 * ```ts
 * const { rate, retryAfterMs } = parseRateLimitHeaders(response.headers, clock.now());
 * // OpenAI: x-ratelimit-limit-requests: 500, x-ratelimit-reset-requests: 6m0s
 * // → rate { limit: 500, windowMs: 60000, resetMs: 360000 }
 * ```
 */
export function parseRateLimitHeaders(headers: HeadersLike, nowMs: number): ParsedRateHeaders {
  const lookup = collectRateHeaders(headers);
  if (lookup.size === 0) return { rate: null, retryAfterMs: null };
  let rate: RateInfo | null = null;
  for (const parseDialect of DIALECTS) {
    const found = parseDialect(lookup, nowMs);
    if (found === null) continue;
    if (rate === null) rate = found;
    else fillMissingRate(rate, found);
  }
  return { rate, retryAfterMs: parseRetryAfter(lookup, nowMs) };
}
