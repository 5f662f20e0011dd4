import type { TokenLifetime } from "../../src/catalog/types.js";
import { InvalidArgumentError } from "../../src/errors.js";

/** Every spelling `--lifetime` takes; `m` means months, as in the contract's `1m`/`6m`. */
const SPELLINGS: Readonly<Record<string, TokenLifetime>> = {
  "1m": "1m",
  "1mo": "1m",
  "6m": "6m",
  "6mo": "6m",
  "12mo": "1y",
  "1y": "1y",
};

/** The choices as `--help` and error messages show them. */
export const LIFETIME_CHOICES = "1mo|6mo|1y";

/**
 * Reads `--lifetime`: `1mo` (or `1m`) is one month, `6mo` (or `6m`) six months, `1y` (or
 * `12mo`) a year. Anything else is refused with the choices, and with a word on minutes when
 * the text looks like a duration in minutes or another unit, since `m` reads as minutes to
 * many people.
 *
 * @example
 * ```ts
 * parseTokenLifetime("6mo"); // "6m"
 * parseTokenLifetime("30m"); // throws: … m and mo mean months, never minutes.
 * ```
 */
export function parseTokenLifetime(text: string): TokenLifetime {
  const lifetime = SPELLINGS[text.trim()];
  if (lifetime !== undefined) return lifetime;
  const hint = /^\d+\s*[a-z]*$/i.test(text.trim())
    ? " Tokens last one month, six months or a year; m and mo mean months, never minutes."
    : "";
  throw new InvalidArgumentError(
    `--lifetime must be 1mo (or 1m), 6mo (or 6m) or 1y (got "${text}").${hint}`,
  );
}
