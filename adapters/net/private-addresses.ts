import { BlockList, isIP } from "node:net";

/**
 * Addresses a server-side fetch of a URL someone else chose must never reach unless the
 * operator allows it: loopback, private networks, link-local (cloud metadata services),
 * carrier-grade NAT, multicast and reserved ranges, in IPv4 and IPv6. Node's BlockList
 * matches IPv4-mapped IPv6 addresses (`::ffff:7f00:1`) against the IPv4 ranges; the
 * IPv4-compatible and -translated forms and NAT64 are listed so no embedding slips by.
 */
const PRIVATE_RANGES = (() => {
  const list = new BlockList();
  for (const [network, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4],
  ] as const) {
    list.addSubnet(network, prefix, "ipv4");
  }
  for (const [network, prefix] of [
    // `::`, `::1` and the deprecated IPv4-compatible `::a.b.c.d`.
    ["::", 96],
    ["::ffff:0:0:0", 96],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8],
    ["64:ff9b::", 96],
    ["2001:db8::", 32],
  ] as const) {
    list.addSubnet(network, prefix, "ipv6");
  }
  return list;
})();

/**
 * Whether an IP address is loopback, private, link-local or otherwise not a public address.
 * Anything that is not an IP address counts as private (refused).
 *
 * @example
 * ```ts
 * isPrivateAddress("169.254.169.254"); // true
 * isPrivateAddress("::ffff:10.0.0.1"); // true
 * isPrivateAddress("1.1.1.1"); // false
 * ```
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE_RANGES.check(address, "ipv4");
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return PRIVATE_RANGES.check(mapped[1], "ipv4");
  return PRIVATE_RANGES.check(address, "ipv6");
}

/**
 * Whether a URL's host is an IP address literal (`127.0.0.1`, `[::1]`) that is private.
 * Such a host is connected to without a DNS lookup, so the guarded lookup never sees it:
 * it must be checked before the fetch. A host name is not (its addresses are checked when
 * connecting). WHATWG URLs already spell `0x7f.1` or `2130706433` as `127.0.0.1`.
 *
 * @example
 * ```ts
 * isPrivateLiteralHost(new URL("http://[::ffff:127.0.0.1]/").hostname); // true
 * isPrivateLiteralHost("idp.example"); // false
 * ```
 */
export function isPrivateLiteralHost(hostname: string): boolean {
  const literal = hostname.replace(/^\[|\]$/g, "");
  return isIP(literal) !== 0 && isPrivateAddress(literal);
}
