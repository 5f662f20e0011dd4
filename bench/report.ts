/**
 * The median of `values` (the mean of the middle two for an even count); NaN when empty.
 *
 * @example
 * ```ts
 * median([3, 1, 2]); // 2
 * ```
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Column alignment: numbers read best right-aligned. */
export type Align = "left" | "right";

/**
 * A plain-text table with a header rule, padded so the columns line up in any terminal.
 *
 * @example
 * ```ts
 * console.log(formatTable(["name", "tasks/s"], [["p-limit", "812 000"]], ["left", "right"]));
 * ```
 */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  align: readonly Align[] = [],
): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        align[column] === "right" ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join("  ")
      .trimEnd();
  const rule = widths.map((width) => "-".repeat(width)).join("  ");
  return [line(headers), rule, ...rows.map(line)].join("\n");
}

/**
 * A whole number with thin groups of three ("1 234 567"), for rates.
 *
 * @example
 * ```ts
 * formatCount(1234567.8); // "1 234 568"
 * ```
 */
export function formatCount(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return Math.round(value)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, " ");
}

/**
 * A ratio as "1.23×".
 *
 * @example
 * ```ts
 * formatRatio(0.5); // "0.50×"
 * ```
 */
export function formatRatio(ratio: number): string {
  return `${ratio.toFixed(2)}×`;
}

/**
 * A share as a percentage with one decimal ("97.4%").
 *
 * @example
 * ```ts
 * formatPercent(0.974); // "97.4%"
 * ```
 */
export function formatPercent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}
