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

const NONE_LISTED: ReadonlySet<string> = new Set();

/**
 * The header names listed in `Connection` values (lower case) that are hop-by-hop only
 * because they are listed there (the fixed ones and the `close` option are left out).
 *
 * @example
 * ```ts
 * connectionListed(["close, X-Trace"]); // Set { "x-trace" }
 * ```
 */
export function connectionListed(values: readonly string[]): ReadonlySet<string> {
  let names: Set<string> | null = null;
  for (const value of values) {
    // Nearly every request says just this; it lists nothing beyond the fixed set.
    if (value === "keep-alive" || value === "close") continue;
    for (const token of value.split(",")) {
      const name = token.trim().toLowerCase();
      if (!name || name === "close" || HOP_BY_HOP_HEADERS.has(name)) continue;
      names ??= new Set();
      names.add(name);
    }
  }
  return names ?? NONE_LISTED;
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
