import { HTTP_TOKEN } from "../../../src/catalog/credential-rules.js";

/** What Sluice says about the hop it forwards, in a `Forwarded` element. */
export interface ForwardedHop {
  /** The caller's address, when known. */
  remoteAddress: string | null;
  /** The `Host` the caller asked for, when it sent one. */
  host: string | null;
  /** The scheme the caller used to reach Sluice. */
  proto: string;
}

/**
 * A `Forwarded` value (RFC 7239) with this hop appended as the last element: an origin that
 * trusts Sluice reads the last element, which a caller cannot forge, while the caller's own
 * elements stay in front of it as claims. An IPv6 address goes in brackets and quotes
 * (RFC 7239 section 6).
 *
 * @example
 * ```ts
 * forwardedWithHop(null, { remoteAddress: "::1", host: "llm.pools.example", proto: "https" });
 * // 'for="[::1]";host=llm.pools.example;proto=https'
 * ```
 */
export function forwardedWithHop(previous: string | null, hop: ForwardedHop): string {
  const pairs: string[] = [];
  if (hop.remoteAddress) {
    const address = hop.remoteAddress.includes(":") ? `[${hop.remoteAddress}]` : hop.remoteAddress;
    pairs.push(`for=${quotedIfNeeded(address)}`);
  }
  if (hop.host) pairs.push(`host=${quotedIfNeeded(hop.host)}`);
  pairs.push(`proto=${hop.proto}`);
  const element = pairs.join(";");
  return previous ? `${previous}, ${element}` : element;
}

function quotedIfNeeded(value: string): string {
  if (HTTP_TOKEN.test(value)) return value;
  return `"${value.replace(/["\\]/g, "\\$&")}"`;
}
