/**
 * Connection-specific header fields that a proxy must not forward (RFC 9110 section 7.6.1),
 * plus `proxy-connection`, a non-standard one some clients still send.
 */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/**
 * The header names listed in `Connection` values (lower case): they are hop-by-hop too.
 *
 * @example
 * ```ts
 * connectionListed("close, X-Trace"); // Set { "close", "x-trace" }
 * ```
 */
export function connectionListed(values: readonly string[]): ReadonlySet<string> {
  const names = new Set<string>();
  for (const value of values) {
    for (const token of value.split(",")) {
      const name = token.trim().toLowerCase();
      if (name) names.add(name);
    }
  }
  return names;
}

/**
 * Whether a header (lower-case name) is hop-by-hop: a fixed one, a `proxy-*` one, or one
 * the message's `Connection` header lists.
 *
 * @example
 * ```ts
 * isHopByHop("keep-alive", new Set()); // true
 * isHopByHop("x-trace", connectionListed(["x-trace"])); // true
 * ```
 */
export function isHopByHop(name: string, listed: ReadonlySet<string>): boolean {
  return HOP_BY_HOP_HEADERS.has(name) || name.startsWith("proxy-") || listed.has(name);
}
