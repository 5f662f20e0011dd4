import type { CliIo } from "./command.js";

/**
 * What a terminal could act on or hide, except the line feed that ends a line: controls (C0,
 * DEL, C1), format characters (bidirectional overrides and isolates, zero-width ones), line
 * and paragraph separators, lone surrogates, private-use and unassigned code points.
 */
const NON_PRINTABLE = /[^\P{C}\n]|[\u2028\u2029]/gu;

function escapeUnits(character: string): string {
  let escaped = "";
  for (let i = 0; i < character.length; i++) {
    escaped += `\\u${character.charCodeAt(i).toString(16).padStart(4, "0")}`;
  }
  return escaped;
}

/**
 * Replaces every non-printable character with its `\uXXXX` escape, so catalog text (a pool
 * name written before names were checked, a name in another process's catalog) can neither
 * drive the terminal (ESC sequences, BEL) nor read in another order than it is stored
 * (bidirectional overrides). The escape is JSON's own, so a JSON line stays valid JSON with
 * the same value.
 *
 * @example
 * ```ts
 * escapeNonPrintable("chat\u001b[2J"); // "chat\\u001b[2J"
 * escapeNonPrintable(JSON.stringify({ name: "a\u202eb" })); // '{"name":"a\\u202eb"}'
 * ```
 */
export function escapeNonPrintable(text: string): string {
  return text.replace(NON_PRINTABLE, escapeUnits);
}

/**
 * The same io with every line escaped by {@link escapeNonPrintable}: one place for every
 * command's output, error messages that quote input included.
 *
 * @example
 * ```ts
 * return dispatch(argv, printableIo(io));
 * ```
 */
export function printableIo(io: CliIo): CliIo {
  return {
    ...io,
    out: (line) => io.out(escapeNonPrintable(line)),
    err: (line) => io.err(escapeNonPrintable(line)),
  };
}
