import type { RateInfo } from "./types.js";

/** Window length of the per-minute dialects (OpenAI, Anthropic, GitHub search). */
export const MINUTE_MS = 60_000;

type RateField = keyof RateInfo;

/**
 * Builds a {@link RateInfo} holding only the defined fields, or null when there are none, so
 * callers can tell "no rate facts" from "some".
 */
export function compactRateInfo(
  fields: { [Field in RateField]?: number | undefined },
): RateInfo | null {
  let info: RateInfo | null = null;
  for (const field of Object.keys(fields) as RateField[]) {
    const value = fields[field];
    if (value === undefined) continue;
    info ??= {};
    info[field] = value;
  }
  return info;
}

/**
 * Fills the fields `target` lacks from `source`: the first source to state a fact wins.
 * `limit` and `windowMs` travel together, so a limit is never read against another
 * dialect's window.
 */
export function fillMissingRate(target: RateInfo, source: RateInfo): void {
  if (target.limit === undefined && source.limit !== undefined) {
    target.limit = source.limit;
    if (source.windowMs !== undefined) target.windowMs = source.windowMs;
  }
  for (const field of INDEPENDENT_FIELDS) {
    if (target[field] === undefined && source[field] !== undefined) target[field] = source[field];
  }
}

/** Every field but the `limit`/`windowMs` pair. */
const INDEPENDENT_FIELDS = [
  "remaining",
  "resetMs",
  "tokenLimit",
  "tokenRemaining",
  "tokenResetMs",
] as const satisfies readonly RateField[];
