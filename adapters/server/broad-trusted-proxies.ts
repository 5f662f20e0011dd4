/** Shortest prefixes still taken for a proxy network: a /8 of IPv4, a /16 of IPv6. */
const NARROWEST_BROAD_PREFIX = { v4: 8, v6: 16 } as const;

/**
 * The entries of `--trusted-proxies` so broad that any client may be behind them (shorter
 * than /8 for IPv4, /16 for IPv6: `0.0.0.0/0`, `::/0`…). Their `X-Forwarded-For` is believed,
 * so a client can name any address it likes past IP allowlists and per-address throttles.
 * The list has been validated (config) by the time this reads it.
 *
 * @example
 * ```ts
 * broadTrustedProxies(["10.0.0.0/8", "0.0.0.0/0"]); // ["0.0.0.0/0"]
 * ```
 */
export function broadTrustedProxies(cidrs: readonly string[]): string[] {
  return cidrs.filter((cidr) => {
    const [address = "", prefix] = cidr.split("/");
    if (prefix === undefined) return false;
    const narrowest = address.includes(":") ? NARROWEST_BROAD_PREFIX.v6 : NARROWEST_BROAD_PREFIX.v4;
    return Number(prefix) < narrowest;
  });
}

/**
 * The start-up warning for {@link broadTrustedProxies}, or null when none is that broad.
 *
 * @example
 * ```ts
 * const warning = trustedProxiesWarning(config.trustedProxies);
 * if (warning) log.warn(warning);
 * ```
 */
export function trustedProxiesWarning(cidrs: readonly string[]): string | null {
  const broad = broadTrustedProxies(cidrs);
  if (broad.length === 0) return null;
  return (
    `--trusted-proxies ${broad.join(", ")} trusts ${broad.length === 1 ? "a network" : "networks"} ` +
    "wider than a /8 (IPv4) or /16 (IPv6): any client there can send an X-Forwarded-For naming " +
    "any address, past pools' IP allowlists and the sign-in and registration throttles. " +
    "List only the addresses of your proxies."
  );
}
