/**
 * What a caller reports about one upstream call when it releases its slot (the contract's
 * release outcome report). Every field is optional; `rate` wins over `headers`.
 */
export interface OutcomeReport {
  /** Final upstream HTTP status, integer 100-599. */
  status?: number;
  /** Count of upstream 429 responses observed during the call. */
  throttled?: number;
  /** Upstream retry hint in milliseconds. */
  retryAfterMs?: number;
  /** Pre-parsed rate fields. */
  rate?: RateInfo;
  /** Raw upstream response headers (any casing; a Headers object, a record, or [name, value] pairs). */
  headers?: HeadersLike;
}

/** Response headers as `fetch`, Node's `http` or a plain object carry them (outcome learning reads any). */
export type HeadersLike =
  | Headers
  | Record<string, string | string[] | number | undefined | null>
  | Iterable<readonly [string, string]>;

/**
 * Rate-limit facts, normalised from any header dialect. Counts are per window; `resetMs`
 * is the time from now until the window resets.
 */
export interface RateInfo {
  /** Request limit of the window. */
  limit?: number;
  /** Requests remaining in the window. */
  remaining?: number;
  /** ms until the request window resets. */
  resetMs?: number;
  /** Window length in ms when the upstream states it (IETF `w=`/`t=`, or a per-minute dialect). */
  windowMs?: number;
  /** Token limit of the window. */
  tokenLimit?: number;
  /** Tokens remaining in the window. */
  tokenRemaining?: number;
  /** ms until the token window resets. */
  tokenResetMs?: number;
}

/** An outcome with headers parsed: what the learner consumes. */
export interface ParsedOutcome {
  /** The HTTP status (100-599), or null when none or an invalid one was reported. */
  status: number | null;
  /** True when the upstream throttled (429 seen, `throttled` > 0). */
  throttled: boolean;
  /** ms to pause new admissions (Retry-After and friends), or null. */
  retryAfterMs: number | null;
  /** The rate window the upstream reported (`rate` over headers), or null. */
  rate: RateInfo | null;
}
