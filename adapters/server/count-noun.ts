/**
 * A count and its noun, plural unless the count is one: for log and status lines.
 *
 * @example
 * ```ts
 * countNoun(1, "metric bucket"); // "1 metric bucket"
 * countNoun(3, "pool"); // "3 pools"
 * ```
 */
export function countNoun(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
