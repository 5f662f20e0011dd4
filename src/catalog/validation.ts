import { InvalidArgumentError } from "../errors.js";

/**
 * Catalog validation reports each problem as `"<field>: <message>"` (the same shape
 * `parseOrThrow` uses), with request-body field names, so the Control API can answer
 * 422 `{ message, errors: { field: [messages] } }` via {@link groupIssuesByField}.
 */
export function fieldIssue(field: string, message: string): string {
  return `${field}: ${message}`;
}

/**
 * Groups `"field: message"` issues by field; issues without a field go under `""`.
 *
 * @example
 * ```ts
 * groupIssuesByField(["label: Too long.", "access: Unknown."]);
 * // { label: ["Too long."], access: ["Unknown."] }
 * ```
 */
export function groupIssuesByField(issues: readonly string[]): Record<string, string[]> {
  // A Map, not an object: a field named "valueOf" or "__proto__" (an unknown field a client
  // sent) must not meet Object.prototype. fromEntries makes each an own property.
  const grouped = new Map<string, string[]>();
  for (const issue of issues) {
    const separator = issue.indexOf(": ");
    const field = separator > 0 ? issue.slice(0, separator) : "";
    const message = separator > 0 ? issue.slice(separator + 2) : issue;
    const list = grouped.get(field);
    if (list) list.push(message);
    else grouped.set(field, [message]);
  }
  return Object.fromEntries(grouped);
}

/** Throws one {@link InvalidArgumentError} carrying every issue, when there are any. */
export function throwIfIssues(what: string, issues: readonly string[]): void {
  if (issues.length > 0) {
    throw new InvalidArgumentError(`Invalid ${what}: ${issues.join("; ")}`, issues);
  }
}

/** JSON clients send `null` for "not given" as often as they omit the field. */
export function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

// Date, time and an explicit offset are all required: a zone-less time would be read in the
// server's local zone, which callers cannot know.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

/**
 * Parses an ISO-8601 / RFC 3339 date-time with an offset to epoch ms; null when malformed
 * or not a real calendar instant (JavaScript's `Date.parse` accepts "February 30").
 *
 * @example
 * ```ts
 * parseIsoDateTime("2030-01-01T00:00:00Z"); // 1893456000000
 * parseIsoDateTime("2030-02-30T00:00:00Z"); // null
 * ```
 */
export function parseIsoDateTime(text: string): number | null {
  const match = ISO_DATE_TIME.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) =>
    Number(match[i] ?? 0),
  ) as [number, number, number, number, number, number];
  const millis = Number((match[7] ?? "").padEnd(3, "0").slice(0, 3));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const instant = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, millis));
  // Date.UTC reads years 0-99 as 1900-1999; setting the year afterwards keeps "0050" as 50.
  const local = instant.setUTCFullYear(year);
  if (match[8]) return local;
  const offsetHours = Number(match[10]);
  const offsetMinutes = Number(match[11]);
  if (offsetHours > 23 || offsetMinutes > 59) return null;
  const offsetMs = (offsetHours * 60 + offsetMinutes) * 60_000;
  return match[9] === "+" ? local - offsetMs : local + offsetMs;
}

/** Days in a month (1–12) of a year, Gregorian. */
export function daysInMonth(year: number, month: number): number {
  const lastDay = new Date(Date.UTC(2000, month, 0));
  lastDay.setUTCFullYear(year, month, 0);
  return lastDay.getUTCDate();
}

/**
 * Adds calendar months in UTC, clamping the day to the target month's length
 * (31 January + 1 month = 28 or 29 February), keeping the time of day.
 *
 * @example
 * ```ts
 * addUtcMonths(Date.UTC(2025, 0, 31), 1) === Date.UTC(2025, 1, 28); // true
 * ```
 */
export function addUtcMonths(epochMs: number, months: number): number {
  const start = new Date(epochMs);
  const monthIndex = start.getUTCMonth() + months;
  const year = start.getUTCFullYear() + Math.floor(monthIndex / 12);
  const month = ((monthIndex % 12) + 12) % 12;
  const day = Math.min(start.getUTCDate(), daysInMonth(year, month + 1));
  const timeOfDay =
    epochMs - Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate());
  return Date.UTC(year, month, day) + timeOfDay;
}

/**
 * Length in code points, so a 60-character label of emoji is 60, not 120.
 *
 * @example
 * ```ts
 * characterCount("🔑🔑"); // 2 ("🔑🔑".length is 4)
 * ```
 */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
