/**
 * Tolerant parsers for the scalar values found in rate-limit headers. Each returns
 * `undefined` for anything malformed, negative or absurd, so a bad header only loses its
 * own field and never throws.
 */

/** Longest duration we believe (10 years): anything longer is a bug upstream, not a hint. */
export const MAX_DURATION_MS = 10 * 365.25 * 24 * 60 * 60 * 1000;

/** Below this a bare reset number is delta seconds; from here it is epoch seconds (Sep 2001). */
const EPOCH_SECONDS_FLOOR = 1e9;
/** From here a bare reset number is epoch milliseconds (Sep 2001 in ms). */
const EPOCH_MILLIS_FLOOR = 1e12;

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;
const DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/y;
const RFC3339_START = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}/;
/** IMF-fixdate, RFC 850 and asctime all open with a day name. */
const HTTP_DATE_START = /^[A-Za-z]{3}/;

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * A non-negative decimal number ("12", "0.5"); signs, exponents, hex and blanks are refused
 * because no rate-limit dialect sends them and `Number()` would accept them silently.
 */
export function parseDecimal(value: string): number | undefined {
  if (!DECIMAL.test(value)) return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

/**
 * A request or token count. Takes the first member of a comma-separated value, because
 * `Headers` joins repeated fields with ", " and the IETF drafts append policies after it.
 */
export function parseCount(value: string): number | undefined {
  const comma = value.indexOf(",");
  const first = comma === -1 ? value : value.slice(0, comma).trim();
  const count = parseDecimal(first);
  return count !== undefined && count <= Number.MAX_SAFE_INTEGER ? count : undefined;
}

/** A duration in ms, refused when negative or beyond {@link MAX_DURATION_MS}. */
export function boundedDuration(ms: number): number | undefined {
  return Number.isFinite(ms) && ms >= 0 && ms <= MAX_DURATION_MS ? ms : undefined;
}

/** Seconds (decimal allowed) as ms. */
export function parseSecondsToMs(value: string): number | undefined {
  const seconds = parseDecimal(value);
  return seconds === undefined ? undefined : boundedDuration(seconds * 1000);
}

/**
 * A Go-style duration as OpenAI sends it ("6m0s", "12ms", "1h2m3.5s", "0.5s"); a bare
 * number is seconds.
 */
export function parseGoDurationToMs(value: string): number | undefined {
  const bare = parseSecondsToMs(value);
  if (bare !== undefined || value.length === 0) return bare;
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < value.length) {
    const start = DURATION_PART.lastIndex;
    const part = DURATION_PART.exec(value);
    if (part === null || part.index !== start) return undefined;
    total += Number(part[1]) * (UNIT_MS[part[2] as string] as number);
  }
  return boundedDuration(total);
}

/** An RFC 3339 or HTTP-date, as ms from `nowMs` (0 when already past). */
export function parseDateToMs(value: string, nowMs: number): number | undefined {
  if (!RFC3339_START.test(value) && !HTTP_DATE_START.test(value)) return undefined;
  const at = Date.parse(value);
  if (!Number.isFinite(at)) return undefined;
  return boundedDuration(Math.max(0, at - nowMs));
}

/**
 * A reset in whatever form the upstream chose, as ms from `nowMs`:
 * - a bare number below 1e9 is delta seconds; 1e9 up to 1e12 is epoch seconds; from 1e12
 *   epoch milliseconds. A delta of 1e9 s is 31 years (absurd anyway) and epoch 1e9 s is
 *   2001 (before any live reset), so the ranges cannot be confused in practice;
 * - a Go-style duration ("1m30s");
 * - an RFC 3339 or HTTP-date.
 * A reset already in the past yields 0.
 */
export function parseResetToMs(value: string, nowMs: number): number | undefined {
  const number = parseDecimal(value);
  if (number === undefined) return parseGoDurationToMs(value) ?? parseDateToMs(value, nowMs);
  if (number < EPOCH_SECONDS_FLOOR) return boundedDuration(number * 1000);
  const atMs = number < EPOCH_MILLIS_FLOOR ? number * 1000 : number;
  return boundedDuration(Math.max(0, atMs - nowMs));
}
