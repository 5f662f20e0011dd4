import { type HeaderLookup, hasHeaderWithPrefix, readField } from "../header-lookup.js";
import { compactRateInfo, MINUTE_MS } from "../rate-info.js";
import type { RateInfo } from "../types.js";
import { parseCount, parseResetToMs } from "../values.js";

const PREFIX = "anthropic-ratelimit-";

interface TokenWindow {
  limit: number | undefined;
  remaining: number | undefined;
  resetMs: number | undefined;
}

/**
 * Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,
 * remaining,reset}`, resets as RFC 3339 date-times, limits per minute. Token facts come
 * from the combined `tokens` family (Anthropic documents it as the most restrictive limit in
 * effect), else from whichever of input/output tokens has less remaining.
 *
 * @example
 * ```ts
 * parseAnthropicHeaders(new Map([["anthropic-ratelimit-requests-limit", "50"]]), Date.now());
 * // → { limit: 50, windowMs: 60000 }
 * ```
 */
export function parseAnthropicHeaders(headers: HeaderLookup, nowMs: number): RateInfo | null {
  if (!hasHeaderWithPrefix(headers, PREFIX)) return null;
  const requests = readWindow(headers, "requests", nowMs);
  const tokens = tightestTokenWindow(headers, nowMs);
  return compactRateInfo({
    limit: requests.limit,
    windowMs: requests.limit === undefined ? undefined : MINUTE_MS,
    remaining: requests.remaining,
    resetMs: requests.resetMs,
    tokenLimit: tokens.limit,
    tokenRemaining: tokens.remaining,
    tokenResetMs: tokens.resetMs,
  });
}

function tightestTokenWindow(headers: HeaderLookup, nowMs: number): TokenWindow {
  const combined = readWindow(headers, "tokens", nowMs);
  if (isStated(combined)) return combined;
  const input = readWindow(headers, "input-tokens", nowMs);
  const output = readWindow(headers, "output-tokens", nowMs);
  if (!isStated(output)) return input;
  if (!isStated(input)) return output;
  return (output.remaining ?? Number.POSITIVE_INFINITY) <
    (input.remaining ?? Number.POSITIVE_INFINITY)
    ? output
    : input;
}

function readWindow(headers: HeaderLookup, family: string, nowMs: number): TokenWindow {
  const base = `${PREFIX}${family}-`;
  return {
    limit: readField(headers, `${base}limit`, parseCount),
    remaining: readField(headers, `${base}remaining`, parseCount),
    resetMs: readField(headers, `${base}reset`, parseResetToMs, nowMs),
  };
}

function isStated(window: TokenWindow): boolean {
  return (
    window.limit !== undefined || window.remaining !== undefined || window.resetMs !== undefined
  );
}
