import { BlockList, isIP } from "node:net";

/** A CIDR (`10.0.0.0/8`, `2001:db8::/32`) or a single address, as an operator writes one. */
interface ParsedCidr {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * An address as compared: IPv4-mapped IPv6 (`::ffff:10.0.0.7`, what a dual-stack socket
 * reports for an IPv4 peer) as its IPv4 address, an IPv6 zone (`%eth0`) dropped, IPv6 in
 * lower case. null when `text` is no IP address.
 *
 * @example
 * ```ts
 * normalizeAddress("::ffff:10.0.0.7"); // "10.0.0.7"
 * normalizeAddress("example.com"); // null
 * ```
 */
export function normalizeAddress(text: string): string | null {
  const trimmed = text.trim();
  const unzoned = trimmed.includes("%") ? trimmed.slice(0, trimmed.indexOf("%")) : trimmed;
  const family = isIP(unzoned);
  if (family === 4) return unzoned;
  if (family !== 6) return null;
  const mapped = MAPPED_IPV4.exec(unzoned);
  if (mapped && isIP(mapped[1] as string) === 4) return mapped[1] as string;
  return unzoned.toLowerCase();
}

function parseCidr(text: string): ParsedCidr | null {
  const slash = text.indexOf("/");
  const address = normalizeAddress(slash < 0 ? text : text.slice(0, slash));
  if (address === null) return null;
  const family = isIP(address) === 4 ? "ipv4" : "ipv6";
  const max = family === "ipv4" ? 32 : 128;
  if (slash < 0) return { address, prefix: max, family };
  const prefixText = text.slice(slash + 1).trim();
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  // A mapped prefix (::ffff:10.0.0.0/104) was turned into IPv4: its prefix shrinks by 96.
  const mappedShift = family === "ipv4" && isIP(text.slice(0, slash).trim()) === 6 ? 96 : 0;
  const effective = prefix - mappedShift;
  if (effective < 0 || effective > max) return null;
  return { address, prefix: effective, family };
}

/**
 * Why `text` is not a CIDR or address this list takes; null when it is one.
 *
 * @example
 * ```ts
 * cidrIssue("10.0.0.0/8"); // null
 * cidrIssue("10.0.0.0/33"); // "10.0.0.0/33 is not an IP address or CIDR …"
 * ```
 */
export function cidrIssue(text: string): string | null {
  return parseCidr(text) === null
    ? `${JSON.stringify(text.slice(0, 60))} is not an IP address or CIDR (such as 10.0.0.0/8, 2001:db8::/32 or 203.0.113.7).`
    : null;
}

/**
 * A set of address ranges (Node's `net.BlockList`): IPv4 and IPv6 CIDRs and single
 * addresses; an IPv4-mapped IPv6 address matches its IPv4 ranges and the other way round.
 *
 * @example
 * ```ts
 * const list = AddressList.parse(["10.0.0.0/8", "2001:db8::/32"]);
 * list.has("::ffff:10.1.2.3"); // true
 * list.has("192.0.2.1"); // false
 * ```
 */
export class AddressList {
  private constructor(private readonly blocks: BlockList) {}

  /** The list of `cidrs`; throws a `TypeError` naming the first entry that is none (see {@link cidrIssue}). */
  static parse(cidrs: readonly string[]): AddressList {
    const blocks = new BlockList();
    for (const text of cidrs) {
      const cidr = parseCidr(text);
      if (cidr === null) throw new TypeError(cidrIssue(text) ?? "not a CIDR");
      blocks.addSubnet(cidr.address, cidr.prefix, cidr.family);
    }
    return new AddressList(blocks);
  }

  /** Whether `address` (any spelling {@link normalizeAddress} takes) is in a range; false for no address. */
  has(address: string | null): boolean {
    if (address === null) return false;
    const normalized = normalizeAddress(address);
    if (normalized === null) return false;
    return this.blocks.check(normalized, isIP(normalized) === 4 ? "ipv4" : "ipv6");
  }
}
