import { BlockList, isIP } from "node:net";

/** Shortest prefixes still taken for a proxy network: a /8 of IPv4, a /16 of IPv6. */
export const NARROWEST_BROAD_PREFIX = { ipv4: 8, ipv6: 16 } as const;

/** IPv4-mapped IPv6 (`::ffff:0:0/96`): a dual-stack socket's IPv4 peers, matched as IPv4. */
const MAPPED_IPV4 = new BlockList();
MAPPED_IPV4.addSubnet("::ffff:0:0", 96, "ipv6");

/** How much of the address space one trusted-proxy entry covers; see {@link trustedProxyWidth}. */
export interface TrustedProxyWidth {
  /** The addresses it is judged by: IPv4 for an IPv4-mapped IPv6 range. */
  family: "ipv4" | "ipv6";
  /** Its prefix in that family (32 or 128 for a single address). */
  prefix: number;
}

/**
 * The width of a trusted-proxy entry (a validated CIDR or address) as the clients it trusts
 * see it. An IPv6 range inside `::ffff:0:0/96` trusts IPv4 clients (the address list matches
 * `10.1.2.3` and `::ffff:10.1.2.3` alike), so it counts as IPv4 of prefix − 96; an IPv6
 * range holding that whole block (`::/80`) trusts every IPv4 client, an IPv4 /0.
 *
 * @example
 * ```ts
 * trustedProxyWidth("::ffff:10.0.0.0/104"); // { family: "ipv4", prefix: 8 }
 * trustedProxyWidth("::ffff:0:0/96"); // { family: "ipv4", prefix: 0 }
 * trustedProxyWidth("2001:db8::/32"); // { family: "ipv6", prefix: 32 }
 * ```
 */
export function trustedProxyWidth(cidr: string): TrustedProxyWidth {
  const slash = cidr.indexOf("/");
  const text = (slash < 0 ? cidr : cidr.slice(0, slash)).trim();
  const address = text.includes("%") ? text.slice(0, text.indexOf("%")) : text;
  const ipv4 = isIP(address) === 4;
  const max = ipv4 ? 32 : 128;
  const prefix = slash < 0 ? max : Number(cidr.slice(slash + 1).trim());
  if (ipv4) return { family: "ipv4", prefix };
  if (prefix >= 96 && MAPPED_IPV4.check(address, "ipv6")) {
    return { family: "ipv4", prefix: prefix - 96 };
  }
  const range = new BlockList();
  range.addSubnet(address, prefix, "ipv6");
  // A prefix of 96 or less that holds one mapped address holds all of them.
  if (range.check("::ffff:0:0", "ipv6")) return { family: "ipv4", prefix: 0 };
  return { family: "ipv6", prefix };
}

/**
 * The trusted-proxy entries (the server's `--trusted-proxies`, a trusted-header policy's
 * `trustedProxies`) so broad that any client may be behind them (shorter
 * than /8 for IPv4, /16 for IPv6: `0.0.0.0/0`, `::/0`, `::ffff:0:0/96`…, judged by
 * {@link trustedProxyWidth}). Their `X-Forwarded-For` is believed, so a client can name any
 * address (or identity) it likes past IP allowlists and per-address throttles. The list has
 * been validated (config, schema) by the time this reads it.
 *
 * @example
 * ```ts
 * broadTrustedProxies(["10.0.0.0/8", "0.0.0.0/0", "::ffff:0:0/96"]); // ["0.0.0.0/0", "::ffff:0:0/96"]
 * ```
 */
export function broadTrustedProxies(cidrs: readonly string[]): string[] {
  return cidrs.filter((cidr) => {
    const { family, prefix } = trustedProxyWidth(cidr);
    return prefix < NARROWEST_BROAD_PREFIX[family];
  });
}
