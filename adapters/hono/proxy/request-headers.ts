import type { OutgoingHttpHeaders } from "node:http";
import type { UpstreamCredential } from "../../../src/catalog/pool-secrets.js";
import { sluiceSecretInAuthorization } from "../caller/caller-auth.js";
import type { HeaderLookup } from "../lock/request-headers.js";
import { forwardedWithHop } from "./forwarded.js";
import { connectionListed, isHopByHop } from "./hop-by-hop.js";
import { viaWithSluice } from "./via.js";

/** What shapes the headers of an origin request. */
export interface UpstreamHeaderInput {
  /** The caller's request headers (copied from them when they are a web `Headers`). */
  headers: HeaderLookup;
  /** On Node, the same headers as `rawHeaders` name/value pairs (copied from them when given). */
  rawHeaders?: readonly string[] | undefined;
  /** The pool's managed credential, set on the way out (it replaces the caller's value). */
  credential: UpstreamCredential | null;
  remoteAddress: string | null;
  /** Scheme the caller used to reach Sluice. */
  forwardedProto: string;
  /** Length of a buffered body (signed pools); otherwise the caller's `Content-Length` is kept. */
  bodyLength?: number;
  /** Headers added last (origin signature). */
  extra?: Readonly<Record<string, string>>;
  /** HTTP version the caller used ("1.1" when unknown), for `Via`. */
  httpVersion?: string | undefined;
}

/** Rebuilt below, never copied: the caller's own values cannot be trusted or are replaced. */
const REBUILT = new Set([
  "host",
  "expect",
  "content-length",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-forwarded-for",
  "forwarded",
  "x-real-ip",
  "via",
]);

/**
 * The headers of the origin request: the caller's, minus hop-by-hop fields (RFC 9110
 * 7.6.1), Sluice's own `X-Svc-*` controls, and a Sluice secret in `Authorization`; plus the
 * managed credential, `X-Forwarded-For` (appended), `-Host` and `-Proto`, `Forwarded`
 * (this hop appended, RFC 7239), `X-Real-IP` (the caller's address; a value the caller sent
 * is never passed on), `Via` (appended, RFC 9110 7.6.3), and `extra`.
 *
 * @example
 * ```ts
 * upstreamRequestHeaders({ headers: c.req.raw.headers, credential, remoteAddress: "10.0.0.7", forwardedProto: "http" });
 * ```
 */
export function upstreamRequestHeaders(input: UpstreamHeaderInput): OutgoingHttpHeaders {
  const { headers, credential } = input;
  const connection = headers.get("connection");
  const listed = connectionListed(connection === null ? [] : [connection]);
  const out: OutgoingHttpHeaders = {};
  const copy = (name: string, value: string) => {
    if (isHopByHop(name, listed) || REBUILT.has(name) || name.startsWith("x-svc-")) return;
    if (name === credential?.header) return;
    // A Sluice secret is never sent upstream, whether or not the pool reads keys there.
    if (name === "authorization" && sluiceSecretInAuthorization(value) !== null) return;
    const previous = out[name];
    if (previous === undefined) out[name] = value;
    else if (Array.isArray(previous)) previous.push(value);
    else out[name] = [String(previous), value];
  };
  const raw = input.rawHeaders;
  if (raw) {
    // Node's raw pairs keep repeated headers apart and skip building a sorted Headers copy.
    for (let i = 0; i + 1 < raw.length; i += 2) {
      copy((raw[i] as string).toLowerCase(), raw[i + 1] as string);
    }
  } else if (headers instanceof Headers) {
    for (const [name, value] of headers) copy(name, value);
  }
  const length = input.bodyLength ?? headers.get("content-length");
  if (length !== null && length !== undefined) out["content-length"] = String(length);
  if (credential) out[credential.header] = credential.value;
  const forwardedFor = headers.get("x-forwarded-for");
  if (input.remoteAddress) {
    out["x-forwarded-for"] = forwardedFor
      ? `${forwardedFor}, ${input.remoteAddress}`
      : input.remoteAddress;
    out["x-real-ip"] = input.remoteAddress;
  } else if (forwardedFor) {
    out["x-forwarded-for"] = forwardedFor;
  }
  const host = headers.get("host");
  if (host) out["x-forwarded-host"] = host;
  out["x-forwarded-proto"] = input.forwardedProto;
  out.forwarded = forwardedWithHop(headers.get("forwarded"), {
    remoteAddress: input.remoteAddress,
    host,
    proto: input.forwardedProto,
  });
  out.via = viaWithSluice(headers.get("via"), input.httpVersion ?? "1.1");
  if (input.extra) Object.assign(out, input.extra);
  return out;
}
