import type { AddressList } from "./address-list.js";
import { normalizeAddress } from "./address-list.js";

/**
 * The caller's address as the IP policy sees it. Starting from the socket's peer, each
 * `X-Forwarded-For` hop is taken from the right only while the address in hand is a
 * trusted proxy: a trusted proxy vouches for the hop it appended, nobody else does. A peer
 * that is no trusted proxy is the caller, whatever its header says (a spoofed
 * `X-Forwarded-For` from an untrusted peer is ignored). A hop that is no IP address stops
 * the walk at the proxy that wrote it; a hop with a port (`203.0.113.7:5555`,
 * `[2001:db8::7]:443`, as some load balancers write it) is its address. null when the socket
 * address is unknown.
 *
 * @example
 * ```ts
 * const trusted = AddressList.parse(["10.0.0.0/8"]);
 * clientAddress("10.0.0.2", "198.51.100.9, 203.0.113.7, 10.0.0.3", trusted); // "203.0.113.7"
 * clientAddress("192.0.2.1", "203.0.113.7", trusted); // "192.0.2.1"
 * ```
 */
export function clientAddress(
  peer: string | null,
  forwardedFor: string | null,
  trusted: AddressList | null,
): string | null {
  const socket = peer === null ? null : normalizeAddress(peer);
  if (socket === null || trusted === null || forwardedFor === null) return socket;
  let current = socket;
  let end = forwardedFor.length;
  while (trusted.has(current) && end > 0) {
    const comma = forwardedFor.lastIndexOf(",", end - 1);
    const hop = hopAddress(forwardedFor.slice(comma + 1, end));
    if (hop === null) return current;
    current = hop;
    end = Math.max(0, comma);
  }
  return current;
}

const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED_IPV6 = /^\[([^\]]+)\](?::\d{1,5})?$/;

/**
 * The address of one `X-Forwarded-For` entry, its port dropped. Read as "no address", a
 * trusted proxy's `ip:port` entry would stop the walk at the proxy itself, and a pool that
 * allows the proxy's own network would admit every client behind it.
 */
function hopAddress(text: string): string | null {
  const entry = text.trim();
  const bracketed = BRACKETED_IPV6.exec(entry)?.[1];
  if (bracketed !== undefined) return normalizeAddress(bracketed);
  const ipv4 = IPV4_WITH_PORT.exec(entry)?.[1];
  return normalizeAddress(ipv4 ?? entry);
}
