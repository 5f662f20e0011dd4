import * as v from "valibot";
import type { OutcomeReport, RateInfo } from "./types.js";
import { MAX_DURATION_MS } from "./values.js";

// Upper bounds stand in for `finite()` (which JSON Schema cannot express): Infinity fails them.
const count = v.pipe(v.number(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER));
const duration = v.pipe(v.number(), v.minValue(0), v.maxValue(MAX_DURATION_MS));

/** Pre-parsed rate facts of an outcome report (the contract's `rate`). */
export const RateInfoSchema = v.object({
  limit: v.optional(v.pipe(count, v.description("Request limit of the window."))),
  remaining: v.optional(v.pipe(count, v.description("Requests remaining in the window."))),
  resetMs: v.optional(v.pipe(duration, v.description("ms until the request window resets."))),
  windowMs: v.optional(
    v.pipe(
      v.number(),
      // minValue rather than gtValue(0): OpenAPI 3.0 cannot express an exclusive minimum.
      v.minValue(1),
      v.maxValue(MAX_DURATION_MS),
      v.description("Window length in ms; per minute when absent."),
    ),
  ),
  tokenLimit: v.optional(v.pipe(count, v.description("Token limit of the window."))),
  tokenRemaining: v.optional(v.pipe(count, v.description("Tokens remaining in the window."))),
  tokenResetMs: v.optional(v.pipe(duration, v.description("ms until the token window resets."))),
});

/** One raw header value: a string, several strings (the first is used) or a number. */
export const HeaderValueSchema = v.union([v.string(), v.array(v.string()), v.number()]);

/**
 * The release outcome report of the Lock API contract, every field optional. The HTTP
 * adapter and the OpenAPI document reuse it; to accept a report without ever refusing a
 * release, use {@link validateOutcomeReport}, which drops bad fields instead of failing.
 *
 * @example
 * ```ts
 * v.parse(OutcomeReportSchema, { status: 429, retryAfterMs: 2000 });
 * ```
 */
export const OutcomeReportSchema = v.object({
  status: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(100),
      v.maxValue(599),
      v.description("Final upstream HTTP status."),
    ),
  ),
  throttled: v.optional(
    v.pipe(
      count,
      v.integer(),
      v.description("Count of upstream 429 responses observed during the call."),
    ),
  ),
  retryAfterMs: v.optional(v.pipe(duration, v.description("Upstream retry hint in ms."))),
  rate: v.optional(
    v.pipe(RateInfoSchema, v.description("Pre-parsed rate fields; win over headers.")),
  ),
  headers: v.optional(
    v.pipe(
      v.record(v.string(), HeaderValueSchema),
      v.description("Raw upstream response headers, parsed for rate-limit facts."),
    ),
  ),
});

/** Header issues listed one by one before the rest are summarised. */
const MAX_HEADER_ISSUES = 10;

type Scalar = "status" | "throttled" | "retryAfterMs";
const SCALAR_FIELDS: readonly Scalar[] = ["status", "throttled", "retryAfterMs"];
const RATE_FIELDS = Object.keys(RateInfoSchema.entries) as (keyof RateInfo)[];

/**
 * Validates an outcome report field by field: an invalid field is dropped from `report` and
 * described in `issues`, so a release is never refused because of a bad report. `rate`
 * fields and header entries are checked one by one too. Besides a plain object, `headers`
 * may be a `Headers`, a `Map` or `[name, value]` pairs (programmatic callers).
 *
 * @example
 * ```ts
 * validateOutcomeReport({ status: 99, throttled: 2 });
 * // → { report: { throttled: 2 }, issues: ["status: Invalid value: Expected >=100 but received 99"] }
 * ```
 */
export function validateOutcomeReport(input: unknown): { report: OutcomeReport; issues: string[] } {
  const report: OutcomeReport = {};
  const issues: string[] = [];
  if (input === undefined || input === null) return { report, issues };
  if (!isPlainObject(input)) {
    issues.push(`outcome: expected an object, received ${describeType(input)}; ignored`);
    return { report, issues };
  }
  for (const field of SCALAR_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    const result = v.safeParse(OutcomeReportSchema.entries[field], value);
    if (result.success) report[field] = result.output;
    else issues.push(describeIssue(field, result.issues));
  }
  if (input.rate !== undefined) {
    const rate = validateRate(input.rate, issues);
    if (rate !== null) report.rate = rate;
  }
  if (input.headers !== undefined) {
    const headers = validateHeaders(input.headers, issues);
    if (headers !== null) report.headers = headers;
  }
  return { report, issues };
}

function validateRate(input: unknown, issues: string[]): RateInfo | null {
  if (!isPlainObject(input)) {
    issues.push(`rate: expected an object, received ${describeType(input)}`);
    return null;
  }
  let rate: RateInfo | null = null;
  for (const field of RATE_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    const result = v.safeParse(RateInfoSchema.entries[field], value);
    if (!result.success) issues.push(describeIssue(`rate.${field}`, result.issues));
    else if (result.output !== undefined) {
      rate ??= {};
      rate[field] = result.output;
    }
  }
  return rate;
}

/** Marks a member of a header pair list that is not a `[name, value]` pair. */
const NOT_A_PAIR = Symbol("not a header pair");

type HeaderRecord = Record<string, string | string[] | number>;

function validateHeaders(input: unknown, issues: string[]): HeaderRecord | null {
  const entries = headerEntries(input);
  if (entries === null) {
    issues.push(`headers: expected an object of header values, received ${describeType(input)}`);
    return null;
  }
  const headers: HeaderRecord = {};
  let rejected = 0;
  for (const [name, value] of entries) {
    // Nearly every value is a string, which the schema passes as it is: no parse per header
    // (the proxy reports every origin response's headers).
    if (typeof value === "string") {
      headers[name] = value;
      continue;
    }
    const result = v.safeParse(HeaderValueSchema, value);
    if (result.success) headers[name] = result.output;
    else if (++rejected <= MAX_HEADER_ISSUES) {
      issues.push(
        value === NOT_A_PAIR
          ? `headers${name}: expected a [name, value] pair`
          : `headers.${name}: expected a string, an array of strings or a number`,
      );
    }
  }
  if (rejected > MAX_HEADER_ISSUES) {
    issues.push(`headers: ${rejected - MAX_HEADER_ISSUES} more invalid header values ignored`);
  }
  return headers;
}

/**
 * Plain objects as records; `Headers`, `Map` and pair lists by iteration (a member that is
 * not a `[name, value]` pair is kept as {@link NOT_A_PAIR}, to be reported); else null.
 */
function headerEntries(input: unknown): [string, unknown][] | null {
  if (isPlainObject(input)) return Object.entries(input);
  if (typeof input !== "object" || input === null) return null;
  if (typeof (input as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== "function")
    return null;
  const entries: [string, unknown][] = [];
  try {
    for (const entry of input as Iterable<unknown>) {
      if (Array.isArray(entry) && typeof entry[0] === "string") entries.push([entry[0], entry[1]]);
      else entries.push([`[${entries.length}]`, NOT_A_PAIR]);
    }
  } catch {
    // A throwing iterable keeps the entries read so far.
  }
  return entries;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? (value.constructor?.name ?? "an object") : typeof value;
}

function describeIssue(path: string, issues: readonly v.BaseIssue<unknown>[]): string {
  return `${path}: ${issues[0]?.message ?? "invalid"}`;
}
