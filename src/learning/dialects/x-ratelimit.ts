import { type HeaderLookup, readField } from "../header-lookup.js";
import { compactRateInfo, MINUTE_MS } from "../rate-info.js";
import type { RateInfo } from "../types.js";
import { parseCount, parseResetToMs, parseSecondsToMs } from "../values.js";

const HOUR_MS = 3_600_000;

/** GitHub states its window only through `x-ratelimit-resource`; these are documented. */
const GITHUB_RESOURCE_WINDOWS: Readonly<Record<string, number>> = {
  core: HOUR_MS,
  graphql: HOUR_MS,
  search: MINUTE_MS,
  code_search: MINUTE_MS,
};

/**
 * The unsuffixed `x-ratelimit-{limit,remaining,reset}` family (also spelt `x-rate-limit-*`):
 * GitHub, Discord, Twitter and many others.
 * - `reset` may be delta seconds, epoch seconds or epoch ms, told apart by magnitude (below
 *   1e9 delta seconds, below 1e12 epoch seconds, else epoch ms), or a duration or date.
 *   `x-ratelimit-reset-after` (delta seconds, no clock skew) wins when both are sent.
 * - GitHub: `remaining` is derived from `used` when missing; the window comes from
 *   `x-ratelimit-resource` (core and graphql hourly, search per minute), else stays unknown.
 *
 * @example
 * ```ts
 * parseXRateLimitHeaders(new Map([
 *   ["x-ratelimit-limit", "5000"], ["x-ratelimit-resource", "core"],
 * ]), Date.now());
 * // → { limit: 5000, windowMs: 3600000 }
 * ```
 */
export function parseXRateLimitHeaders(headers: HeaderLookup, nowMs: number): RateInfo | null {
  const limit = count(headers, "limit");
  const used = count(headers, "used");
  const remaining =
    count(headers, "remaining") ??
    (limit !== undefined && used !== undefined ? Math.max(0, limit - used) : undefined);
  const resource = headers.get("x-ratelimit-resource");
  return compactRateInfo({
    limit,
    windowMs:
      limit === undefined || resource === undefined ? undefined : GITHUB_RESOURCE_WINDOWS[resource],
    remaining,
    resetMs:
      readField(headers, "x-ratelimit-reset-after", parseSecondsToMs) ??
      readField(headers, "x-ratelimit-reset", parseResetToMs, nowMs) ??
      readField(headers, "x-rate-limit-reset", parseResetToMs, nowMs),
  });
}

function count(headers: HeaderLookup, field: string): number | undefined {
  return (
    readField(headers, `x-ratelimit-${field}`, parseCount) ??
    readField(headers, `x-rate-limit-${field}`, parseCount)
  );
}
