/**
 * Header names a managed credential may not use: the ones that frame or route the message
 * (a wrong value would make the origin misread it), the hop-by-hop ones a proxy drops, and
 * the ones Sluice writes itself (the credential would silently lose to them, or replace them).
 */
const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  "connection",
  "content-length",
  "expect",
  "forwarded",
  "host",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "via",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-real-ip",
]);

/**
 * An HTTP `token` (RFC 9110 5.6.2): a field name, or a parameter value that needs no quotes.
 *
 * @example
 * ```ts
 * HTTP_TOKEN.test("x-api-key"); // true
 * ```
 */
export const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// RFC 9110 5.5, ASCII only: visible characters, with spaces and tabs only between them. A line
// break would end the header early and let the rest of the value pose as more headers.
const FIELD_VALUE = /^[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?$/;

/**
 * Whether Sluice or the connection owns a (lower-case) header: one that frames or routes the
 * message, a hop-by-hop one a proxy drops, or Sluice's own `x-svc-*`. A caller's credential
 * or token can never travel in one.
 *
 * @example
 * ```ts
 * isReservedHeader("x-svc-key"); // true
 * isReservedHeader("x-api-key"); // false
 * ```
 */
export function isReservedHeader(name: string): boolean {
  return RESERVED_HEADERS.has(name) || name.startsWith("x-svc-");
}

/**
 * What is wrong with a managed credential's header name, or null when it can be used.
 *
 * @example
 * ```ts
 * credentialHeaderIssue("x-api-key"); // null
 * credentialHeaderIssue("Host"); // "Cannot be host: Sluice sets or removes that header itself."
 * ```
 */
export function credentialHeaderIssue(header: string): string | null {
  if (!HTTP_TOKEN.test(header)) return "Must be a header name, such as x-api-key.";
  const name = header.toLowerCase();
  if (isReservedHeader(name)) {
    return `Cannot be ${name}: Sluice sets or removes that header itself.`;
  }
  return null;
}

/**
 * What is wrong with a managed credential's value, or null when it can be sent as a header
 * value. The message never repeats the value: it is a secret.
 *
 * @example
 * ```ts
 * credentialValueIssue("Bearer sk-live-123"); // null
 * credentialValueIssue("sk-live-123\n"); // "Must be printable ASCII …"
 * ```
 */
export function credentialValueIssue(value: string): string | null {
  if (value.length === 0) return "Must not be empty.";
  if (!FIELD_VALUE.test(value)) {
    return "Must be printable ASCII with no line breaks, control characters or leading or trailing spaces.";
  }
  return null;
}
