/** Who Sluice is in `Via` (RFC 9110 7.6.3: a gateway names itself in every message it forwards). */
const VIA_NAME = "sluice";

/**
 * A `Via` value with Sluice appended as the latest hop: a gateway adds itself on requests and
 * responses alike (RFC 9110 7.6.3).
 *
 * @example
 * ```ts
 * viaWithSluice("1.1 edge-cache", "1.1"); // "1.1 edge-cache, 1.1 sluice"
 * ```
 */
export function viaWithSluice(
  previous: string | readonly string[] | null | undefined,
  httpVersion: string,
): string {
  const hop = `${httpVersion} ${VIA_NAME}`;
  if (!previous || previous.length === 0) return hop;
  return `${typeof previous === "string" ? previous : previous.join(", ")}, ${hop}`;
}
