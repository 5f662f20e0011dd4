import { broadTrustedProxies, NARROWEST_BROAD_PREFIX } from "../../src/policies/proxy-width.js";

export type { TrustedProxyWidth } from "../../src/policies/proxy-width.js";
export { broadTrustedProxies, trustedProxyWidth } from "../../src/policies/proxy-width.js";

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
  // Named when only its IPv4 width makes an IPv6 entry broad (`::ffff:0:0/96`, not `::/0`).
  const mapped = broad.some(
    (cidr) => cidr.includes(":") && Number(cidr.split("/")[1]) >= NARROWEST_BROAD_PREFIX.ipv6,
  );
  return (
    `--trusted-proxies ${broad.join(", ")} trusts ${broad.length === 1 ? "a network" : "networks"} ` +
    "wider than a /8 (IPv4) or /16 (IPv6): any client there can send an X-Forwarded-For naming " +
    "any address, past pools' IP allowlists and the sign-in and registration throttles. " +
    (mapped
      ? "(An IPv6 range over IPv4-mapped addresses, ::ffff:0:0/96, counts by the IPv4 addresses it holds.) "
      : "") +
    "List only the addresses of your proxies."
  );
}
