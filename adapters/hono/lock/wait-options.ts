import { InvalidArgumentError } from "../../../src/errors.js";
import type { HeaderLookup } from "./request-headers.js";

/** Alternative to the body's `waitMs` (the body wins when both are present). */
export const QUEUE_TIMEOUT_HEADER = "x-svc-queue-timeout-ms";
/** Forces fail-fast even when a wait is asked for. */
export const NO_QUEUE_HEADER = "x-svc-no-queue";

const DIGITS = /^\d+$/;
const FALSE_WORDS = new Set(["0", "false", "no", "off"]);

/** How long an acquire may queue, as the caller asked. */
export interface WaitRequest {
  /** Absent: fail fast. The governor clamps it to the pool's queue timeout. */
  waitMs: number | undefined;
  noQueue: boolean;
}

/**
 * `X-Svc-Queue-Timeout-Ms`: absent → undefined; otherwise whole milliseconds ≥ 0 (anything
 * past 2^53 − 1 taken as 2^53 − 1; the governor clamps it to the pool's queue timeout).
 * Throws {@link InvalidArgumentError} (400 `invalid_request`) for anything else.
 *
 * @example
 * ```ts
 * parseQueueTimeoutHeader("2500"); // 2500
 * parseQueueTimeoutHeader("-1"); // throws
 * ```
 */
export function parseQueueTimeoutHeader(value: string | null): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (!DIGITS.test(text)) {
    throw new InvalidArgumentError(
      `X-Svc-Queue-Timeout-Ms must be a whole number of milliseconds (0 or more), got "${text.slice(0, 40)}".`,
    );
  }
  // Any whole number is a valid wait: a huge one is clamped (to the queue timeout, later).
  return Math.min(Number(text), Number.MAX_SAFE_INTEGER);
}

/**
 * `X-Svc-No-Queue`: present means fail fast, unless its value is `0`, `false`, `no` or `off`.
 *
 * @example
 * ```ts
 * parseNoQueueHeader("1"); // true
 * parseNoQueueHeader(null); // false
 * ```
 */
export function parseNoQueueHeader(value: string | null): boolean {
  if (value === null) return false;
  return !FALSE_WORDS.has(value.trim().toLowerCase());
}

/**
 * The `waitMs` of an acquire body: absent or null → undefined; a JSON integer ≥ 0 → itself
 * (at most 2^53 − 1; the governor clamps it to the pool's queue timeout).
 * Throws {@link InvalidArgumentError} for a negative, fractional or non-numeric value.
 *
 * @example
 * ```ts
 * parseBodyWaitMs({ waitMs: 1000 }); // 1000
 * parseBodyWaitMs({ waitMs: "1000" }); // throws: must be a JSON number
 * ```
 */
export function parseBodyWaitMs(
  body: Readonly<Record<string, unknown>> | undefined,
): number | undefined {
  const value = body?.waitMs;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(
      `waitMs must be a whole number of milliseconds (0 or more), got ${describe(value)}.`,
    );
  }
  return Math.min(value, Number.MAX_SAFE_INTEGER);
}

/**
 * The wait an acquire asks for: the body's `waitMs`, else `X-Svc-Queue-Timeout-Ms`. When the
 * body has a `waitMs` the header is not read at all (contract 4.2: the body wins), so a
 * client-wide default header, even a malformed one, never overrides or fails a body's wait.
 *
 * @example
 * ```ts
 * waitRequest(c.req.raw.headers, { waitMs: 500 }); // { waitMs: 500, noQueue: false }
 * ```
 */
export function waitRequest(
  headers: HeaderLookup,
  body?: Readonly<Record<string, unknown>>,
): WaitRequest {
  if (body) refuseUnknownBodyFields(body);
  const fromBody = parseBodyWaitMs(body);
  return {
    waitMs: fromBody ?? parseQueueTimeoutHeader(headers.get(QUEUE_TIMEOUT_HEADER)),
    noQueue: parseNoQueueHeader(headers.get(NO_QUEUE_HEADER)),
  };
}

/**
 * Throws {@link InvalidArgumentError} (400 `invalid_request`) naming the first field of an
 * acquire body other than `waitMs`: a misspelt wait (`{"wait": 100}`) would otherwise
 * quietly mean fail-fast, as the library's own acquire options do.
 *
 * @example
 * ```ts
 * refuseUnknownBodyFields({ wait: 100 }); // throws: Unknown field "wait" …
 * ```
 */
export function refuseUnknownBodyFields(body: Readonly<Record<string, unknown>>): void {
  for (const field in body) {
    if (field === "waitMs") continue;
    throw new InvalidArgumentError(
      `Unknown field ${JSON.stringify(field.slice(0, 40))} in the acquire body (the only field is waitMs).`,
    );
  }
}

/**
 * A short rendering of a rejected JSON value (JSON.stringify would print Infinity as null, and
 * walk a whole array or object only to cut it).
 */
function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) return "an object";
  const text = typeof value === "number" ? String(value) : JSON.stringify(value);
  return (text ?? typeof value).slice(0, 40);
}
