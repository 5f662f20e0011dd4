import type { HeadersLike } from "./types.js";

/** Rate-limit related headers by lower-case name, one string value each. */
export type HeaderLookup = ReadonlyMap<string, string>;

/**
 * Collects the rate-limit related headers of any {@link HeadersLike} into a lower-case map.
 * Only names that can matter are kept, so a response with dozens of headers costs a few
 * entries. Arrays yield their first element, numbers their decimal form; a repeated name in
 * a pair list keeps its first value, like arrays. Never throws on odd input.
 */
export function collectRateHeaders(headers: HeadersLike | null | undefined): HeaderLookup {
  const lookup = new Map<string, string>();
  if (headers === null || typeof headers !== "object") return lookup;
  try {
    if (isIterable(headers)) {
      for (const entry of headers) {
        if (Array.isArray(entry)) keep(lookup, entry[0], entry[1]);
      }
    } else {
      const record = headers as Record<string, unknown>;
      for (const name of Object.keys(record)) keep(lookup, name, record[name]);
    }
  } catch {
    // A hostile iterable or getter must not fail a release; keep what was read.
  }
  return lookup;
}

function isIterable(value: object): value is Iterable<readonly [string, string]> {
  return typeof (value as { [Symbol.iterator]?: unknown })[Symbol.iterator] === "function";
}

function keep(lookup: Map<string, string>, rawName: unknown, rawValue: unknown): void {
  if (typeof rawName !== "string") return;
  const name = rawName.toLowerCase();
  if (!isRateHeaderName(name) || lookup.has(name)) return;
  const value = headerValue(rawValue);
  if (value !== undefined) lookup.set(name, value);
}

function isRateHeaderName(name: string): boolean {
  return (
    name.includes("ratelimit") || name.includes("rate-limit") || name.startsWith("retry-after")
  );
}

function headerValue(raw: unknown): string | undefined {
  const first = Array.isArray(raw) ? raw[0] : raw;
  if (typeof first === "string") return first.trim();
  if (typeof first === "number" && Number.isFinite(first)) return String(first);
  return undefined;
}

/**
 * Reads one header through a value parser; undefined when absent or malformed.
 *
 * @example
 * ```ts
 * readField(collectRateHeaders({ "Retry-After": "5" }), "retry-after", parseSecondsToMs); // 5000
 * ```
 */
export function readField(
  headers: HeaderLookup,
  name: string,
  parse: (value: string, nowMs: number) => number | undefined,
  nowMs = 0,
): number | undefined {
  const value = headers.get(name);
  return value === undefined ? undefined : parse(value, nowMs);
}

/** True when some collected header name starts with `prefix`: lets a dialect skip itself cheaply. */
export function hasHeaderWithPrefix(headers: HeaderLookup, prefix: string): boolean {
  for (const name of headers.keys()) if (name.startsWith(prefix)) return true;
  return false;
}
