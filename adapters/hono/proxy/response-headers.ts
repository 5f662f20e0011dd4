import type { UpstreamCredential } from "../../../src/catalog/pool-secrets.js";
import type { SlotGrant } from "../../../src/governor/types.js";
import { grantHeaders } from "../lock/lock-responses.js";
import { connectionListed, isHopByHop } from "./hop-by-hop.js";
import { viaWithSluice } from "./via.js";

/** Response headers by lower-case name, repeated names as arrays: what Node's `writeHead` takes. */
export type ResponseHeaderRecord = Record<string, string | string[]>;

/**
 * The headers the client gets for an upstream response (from its raw name/value pairs):
 * hop-by-hop fields dropped (RFC 9110 7.6.1), any upstream `X-Svc-*` dropped (so Sluice's
 * own markers cannot be forged), the managed credential never echoed (its header name, or
 * any value containing it, its token without the auth scheme, or either URL-encoded), `Via`
 * extended, then the governor headers of the grant added. Repeated headers (e.g.
 * `Set-Cookie`) stay separate.
 *
 * @example
 * ```ts
 * clientResponseHeaders(head.rawHeaders, credential, grant);
 * ```
 */
export function clientResponseHeaders(
  rawHeaders: readonly string[],
  credential: UpstreamCredential | null,
  grant: SlotGrant,
  httpVersion = "1.1",
): ResponseHeaderRecord {
  // Names lower-cased once: the Connection header's list is needed before the copy loop.
  const names = new Array<string>(rawHeaders.length >> 1);
  const connection: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    names[i >> 1] = name;
    if (name === "connection") connection.push(rawHeaders[i + 1] as string);
  }
  const listed = connectionListed(connection);
  const secrets = credential ? secretForms(credential) : NO_SECRETS;
  const out: ResponseHeaderRecord = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = names[i >> 1] as string;
    const value = rawHeaders[i + 1] as string;
    if (isHopByHop(name, listed) || name.startsWith("x-svc-")) continue;
    if (name === credential?.header || carriesSecret(value, secrets)) continue;
    const previous = out[name];
    if (previous === undefined) out[name] = value;
    else if (Array.isArray(previous)) previous.push(value);
    else out[name] = [previous, value];
  }
  out.via = viaWithSluice(out.via, httpVersion);
  return Object.assign(out, grantHeaders(grant));
}

const NO_SECRETS: readonly string[] = [];
/** Shorter derived pieces are not looked for: they would drop ordinary headers by chance. */
const MIN_SECRET_LENGTH = 8;
const SCHEME_AND_TOKEN = /^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*[ \t]+(\S.*)$/;
const formsByCredential = new WeakMap<UpstreamCredential, readonly string[]>();

/**
 * The forms in which a credential could come back in a header: its whole value, the token
 * after an auth scheme (`Bearer <token>` → `<token>`: an origin may echo it alone, say in a
 * redirect's query), and each of those URL-encoded (upper- or lower-case escapes). Computed
 * once per credential object.
 */
function secretForms(credential: UpstreamCredential): readonly string[] {
  let forms = formsByCredential.get(credential);
  if (!forms) {
    const value = credential.value;
    const token = SCHEME_AND_TOKEN.exec(value.trim())?.[1]?.trim();
    const encoded = [encodeURIComponent(value), token && encodeURIComponent(token)];
    // Percent escapes are case-insensitive (RFC 3986 2.1): `%2f` is `%2F`. Encoders write them
    // all upper- or all lower-case.
    const lowerEscapes = encoded.map((form) =>
      form?.replace(/%[0-9A-F]{2}/g, (percent) => percent.toLowerCase()),
    );
    const derived = [token, ...encoded, ...lowerEscapes];
    const found = derived.filter(
      (form): form is string => !!form && form !== value && form.length >= MIN_SECRET_LENGTH,
    );
    forms = [...new Set(value.length > 0 ? [value, ...found] : found)];
    formsByCredential.set(credential, forms);
  }
  return forms;
}

function carriesSecret(value: string, secrets: readonly string[]): boolean {
  for (const secret of secrets) if (value.includes(secret)) return true;
  return false;
}
