import type { UpstreamCredential } from "../../../src/catalog/pool-secrets.js";
import type { SlotGrant } from "../../../src/governor/types.js";
import { grantHeaders } from "../lock/lock-responses.js";
import { connectionListed, isHopByHop } from "./hop-by-hop.js";
import { VIA_NAME } from "./request-headers.js";

/** Response headers as `@hono/node-server` passes them to `writeHead` (repeated names as arrays). */
export type ResponseHeaderRecord = Record<string, string | string[]>;

/**
 * The headers the client gets for an upstream response (from Node's `rawHeaders` pairs):
 * hop-by-hop fields dropped (RFC 9110 7.6.1), any upstream `X-Svc-*` dropped (so Sluice's
 * own markers cannot be forged), the managed credential never echoed (its header name, or
 * any value containing it), then the governor headers of the grant added. Repeated headers
 * (e.g. `Set-Cookie`) stay separate.
 *
 * @example
 * ```ts
 * clientResponseHeaders(upstream.rawHeaders, credential, grant, upstream.httpVersion);
 * ```
 */
export function clientResponseHeaders(
  rawHeaders: readonly string[],
  credential: UpstreamCredential | null,
  grant: SlotGrant,
  httpVersion = "1.1",
): ResponseHeaderRecord {
  const listed = connectionListed(valuesOf(rawHeaders, "connection"));
  const secret = credential && credential.value.length > 0 ? credential.value : null;
  const out: ResponseHeaderRecord = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    const value = rawHeaders[i + 1] as string;
    if (isHopByHop(name, listed) || name.startsWith("x-svc-")) continue;
    if (name === credential?.header || (secret !== null && value.includes(secret))) continue;
    const previous = out[name];
    if (previous === undefined) out[name] = value;
    else if (Array.isArray(previous)) previous.push(value);
    else out[name] = [previous, value];
  }
  // A gateway appends itself to Via on responses too (RFC 9110 7.6.3).
  const hop = `${httpVersion} ${VIA_NAME}`;
  const via = out.via;
  out.via = via === undefined ? hop : `${Array.isArray(via) ? via.join(", ") : via}, ${hop}`;
  return Object.assign(out, grantHeaders(grant));
}

function valuesOf(rawHeaders: readonly string[], wanted: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() === wanted)
      values.push(rawHeaders[i + 1] as string);
  }
  return values;
}
