import { fieldIssue } from "./validation.js";

/**
 * The message of a name or label refused by {@link hasControlCharacter}.
 */
export const PLAIN_TEXT_MESSAGE =
  "Must be plain text: no control characters, bidirectional overrides or unpaired UTF-16 surrogates.";

/**
 * Whether text holds a control character (C0, DEL or C1), a bidirectional embedding,
 * override or isolate (U+202A-U+202E, U+2066-U+2069), or an unpaired UTF-16 surrogate.
 * Names and labels are shown in terminals, logs and pages, where control characters could
 * move the cursor or rewrite what a person reads, and bidirectional overrides make text read
 * in another order than it is stored ("Trojan Source"); a lone surrogate is no character at
 * all (SQLite would store it as three U+FFFD, past the length limit). Bidirectional marks
 * (U+200E, U+200F, U+061C) stay allowed: right-to-left names need them and they reorder
 * nothing on their own.
 *
 * @example
 * ```ts
 * hasControlCharacter("ci \u001b[2J"); // true
 * hasControlCharacter("invoice\u202Efdp.exe"); // true
 * hasControlCharacter("\ud800"); // true
 * hasControlCharacter("ünïcødé 🔑"); // false
 * ```
 */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
    if ((code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)) return true;
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      // A high surrogate followed by a low one is one character; anything else is broken.
      if (code > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return true;
      i++;
    }
  }
  return false;
}

/**
 * The issue of a name or label that is not plain text, as a list to spread into others.
 *
 * @example
 * ```ts
 * plainTextIssues("name", "Acme\u001b[2J"); // ["name: Must be plain text: …"]
 * plainTextIssues("name", "Acme"); // []
 * ```
 */
export function plainTextIssues(field: string, text: string): string[] {
  return hasControlCharacter(text) ? [fieldIssue(field, PLAIN_TEXT_MESSAGE)] : [];
}
