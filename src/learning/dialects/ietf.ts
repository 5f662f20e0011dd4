import { type HeaderLookup, readField } from "../header-lookup.js";
import { compactRateInfo, fillMissingRate } from "../rate-info.js";
import { parseStructuredList } from "../structured-list.js";
import type { RateInfo } from "../types.js";
import { parseCount, parseDecimal, parseResetToMs, parseSecondsToMs } from "../values.js";

/** A quota policy: `"default";q=100;w=60` (newer drafts) or `100;w=60` (older drafts). */
interface Policy {
  /** Policy name; "" for the older, unnamed form. */
  name: string;
  quota: number | undefined;
  windowMs: number | undefined;
  /** `qu`: "requests" (the default), "content-bytes", "concurrent-requests". */
  unit: string | undefined;
}

const LEGACY_DICTIONARY_MEMBER = /^(limit|remaining|reset)=(.*)$/;

/**
 * The IETF `RateLimit` header drafts, every generation:
 * - `RateLimit-Policy: "default";q=100;w=60` with `RateLimit: "default";r=50;t=30`. Of
 *   several policies, the request-count one (`qu` absent or "requests") with the lowest
 *   remaining is used; with no `RateLimit` field, the request policy with the lowest rate.
 * - `RateLimit: limit=100, remaining=50, reset=30` (draft 06 dictionary form).
 * - `RateLimit-Limit: 100, 100;w=60`, `RateLimit-Remaining`, `RateLimit-Reset` (delta
 *   seconds; see `parseResetToMs` for epoch values), `RateLimit-Policy: 100;w=60`.
 * The newest form wins field by field.
 *
 * @example
 * ```ts
 * parseIetfHeaders(new Map([
 *   ["ratelimit-policy", '"default";q=100;w=60'],
 *   ["ratelimit", '"default";r=50;t=30'],
 * ]), Date.now());
 * // → { limit: 100, windowMs: 60000, remaining: 50, resetMs: 30000 }
 * ```
 */
export function parseIetfHeaders(headers: HeaderLookup, nowMs: number): RateInfo | null {
  const policyField = headers.get("ratelimit-policy");
  const statusField = headers.get("ratelimit");
  const limitField = headers.get("ratelimit-limit");
  const hasSeparate =
    limitField !== undefined ||
    headers.has("ratelimit-remaining") ||
    headers.has("ratelimit-reset");
  if (policyField === undefined && statusField === undefined && !hasSeparate) return null;

  const policies = policyField === undefined ? [] : parsePolicies(policyField);
  const sources = [
    statusField === undefined ? null : parseStatusField(statusField, policies, nowMs),
    hasSeparate ? parseSeparateFields(headers, limitField, policies, nowMs) : null,
    tightestRequestPolicy(policies),
  ];
  let result: RateInfo | null = null;
  for (const source of sources) {
    if (source === null) continue;
    result ??= {};
    fillMissingRate(result, source);
  }
  return result;
}

function parsePolicies(value: string): Policy[] {
  return parseStructuredList(value).map(({ item, params }) => {
    const named = params.has("q");
    const window = params.get("w");
    const windowSeconds = window === undefined ? undefined : parseDecimal(window);
    return {
      name: named ? item : "",
      quota: parseCount(named ? (params.get("q") as string) : item),
      windowMs: windowSeconds !== undefined && windowSeconds > 0 ? windowSeconds * 1000 : undefined,
      unit: params.get("qu"),
    };
  });
}

function parseStatusField(
  value: string,
  policies: readonly Policy[],
  nowMs: number,
): RateInfo | null {
  const members = parseStructuredList(value);
  const legacy: Record<string, string> = {};
  let chosen: { name: string; remaining: number; resetMs: number | undefined } | null = null;
  for (const { item, params } of members) {
    const dictionary = LEGACY_DICTIONARY_MEMBER.exec(item);
    if (dictionary !== null) {
      legacy[dictionary[1] as string] = (dictionary[2] as string).trim();
      continue;
    }
    const remainingText = params.get("r");
    const remaining = remainingText === undefined ? undefined : parseCount(remainingText);
    if (remaining === undefined || !isRequestUnit(policyNamed(policies, item)?.unit)) continue;
    if (chosen !== null && chosen.remaining <= remaining) continue;
    const reset = params.get("t");
    chosen = {
      name: item,
      remaining,
      resetMs: reset === undefined ? undefined : parseSecondsToMs(reset),
    };
  }
  if (chosen !== null) {
    const policy = policyNamed(policies, chosen.name);
    return compactRateInfo({
      limit: policy?.quota,
      windowMs: policy?.quota === undefined ? undefined : policy.windowMs,
      remaining: chosen.remaining,
      resetMs: chosen.resetMs,
    });
  }
  const limit = legacy.limit === undefined ? undefined : parseCount(legacy.limit);
  return compactRateInfo({
    limit,
    windowMs: windowForQuota(policies, limit),
    remaining: legacy.remaining === undefined ? undefined : parseCount(legacy.remaining),
    resetMs: legacy.reset === undefined ? undefined : parseResetToMs(legacy.reset, nowMs),
  });
}

function parseSeparateFields(
  headers: HeaderLookup,
  limitField: string | undefined,
  policies: readonly Policy[],
  nowMs: number,
): RateInfo | null {
  // `RateLimit-Limit: 100, 100;w=60`: the first member is the limit, the others its policies.
  const limitMembers = limitField === undefined ? [] : parsePolicies(limitField);
  const limit = limitMembers[0]?.quota;
  return compactRateInfo({
    limit,
    windowMs: windowForQuota(limitMembers, limit) ?? windowForQuota(policies, limit),
    remaining: readField(headers, "ratelimit-remaining", parseCount),
    resetMs: readField(headers, "ratelimit-reset", parseResetToMs, nowMs),
  });
}

/** With no live status, the request policy with the lowest rate is the one that binds. */
function tightestRequestPolicy(policies: readonly Policy[]): RateInfo | null {
  let tightest: Policy | null = null;
  let tightestRate = Number.POSITIVE_INFINITY;
  for (const policy of policies) {
    if (policy.quota === undefined || !isRequestUnit(policy.unit)) continue;
    const rate = policy.quota / (policy.windowMs ?? 60_000);
    if (rate < tightestRate) {
      tightest = policy;
      tightestRate = rate;
    }
  }
  return tightest === null
    ? null
    : compactRateInfo({ limit: tightest.quota, windowMs: tightest.windowMs });
}

function policyNamed(policies: readonly Policy[], name: string): Policy | undefined {
  return policies.find((policy) => policy.name === name);
}

function windowForQuota(
  policies: readonly Policy[],
  quota: number | undefined,
): number | undefined {
  if (quota === undefined) return undefined;
  return policies.find((policy) => policy.quota === quota && policy.windowMs !== undefined)
    ?.windowMs;
}

function isRequestUnit(unit: string | undefined): boolean {
  return unit === undefined || unit === "requests";
}
