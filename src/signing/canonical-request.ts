import { createHash } from "node:crypto";

/** Version tag of the signing scheme; it is the first line of every canonical string. */
export const SIGNATURE_VERSION = "v1";

/** Header names the pool proxy adds to a signed origin request (lower case). */
export const SIGNATURE_HEADERS = {
  timestamp: "x-svc-signature-timestamp",
  keyId: "x-svc-signature-key-id",
  signature: "x-svc-signature",
} as const;

/** A request body as the signer and the verifier see it: raw bytes, text (UTF-8) or none. */
export type SignedBody = Uint8Array | ArrayBuffer | string | null | undefined;

/** The fields covered by a signature. */
export interface CanonicalRequestFields {
  /** Epoch milliseconds. */
  timestamp: number;
  method: string;
  /** The request-target as sent to the origin: path and query, exactly as on the wire. */
  pathAndQuery: string;
  /** Hex SHA-256 of the body bytes. */
  bodyDigest: string;
  keyId: string;
}

const EMPTY = new Uint8Array(0);

function bodyBytes(body: SignedBody): Uint8Array {
  if (body === null || body === undefined) return EMPTY;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

/**
 * Hex SHA-256 of a request body (of zero bytes when there is none).
 *
 * @example
 * ```ts
 * bodyDigestHex(""); // "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
 * ```
 */
export function bodyDigestHex(body: SignedBody): string {
  return createHash("sha256").update(bodyBytes(body)).digest("hex");
}

/**
 * The string that is signed: six lines joined by `\n`, no trailing newline —
 * version, timestamp (epoch ms), upper-case method, path and query, hex body digest, key id.
 *
 * @example
 * ```ts
 * canonicalString({ timestamp: 1700000000000, method: "post", pathAndQuery: "/v1/chat?x=1",
 *   bodyDigest: bodyDigestHex("{}"), keyId: "12" });
 * // "v1\n1700000000000\nPOST\n/v1/chat?x=1\n44136fa3…\n12"
 * ```
 */
export function canonicalString(fields: CanonicalRequestFields): string {
  return [
    SIGNATURE_VERSION,
    String(fields.timestamp),
    fields.method.toUpperCase(),
    fields.pathAndQuery,
    fields.bodyDigest,
    fields.keyId,
  ].join("\n");
}

/**
 * Path and query of a URL without normalising it (dot segments and percent-encodings are
 * kept as sent, since the signature covers the exact bytes). Accepts a request-target such
 * as Node's `request.url` ("/v1/chat?x=1"), an absolute URL string, or a `URL` (already
 * normalised by the URL parser).
 *
 * @example
 * ```ts
 * pathAndQueryOf("https://origin.test/v1/chat?x=1"); // "/v1/chat?x=1"
 * ```
 */
export function pathAndQueryOf(url: string | URL): string {
  if (typeof url !== "string") return url.pathname + url.search;
  if (url.startsWith("/")) return url;
  const scheme = url.indexOf("://");
  if (scheme < 0) return url;
  const pathStart = url.indexOf("/", scheme + 3);
  const queryStart = url.indexOf("?", scheme + 3);
  if (pathStart < 0 || (queryStart >= 0 && queryStart < pathStart)) {
    return queryStart < 0 ? "/" : `/${url.slice(queryStart)}`;
  }
  const hash = url.indexOf("#", pathStart);
  return hash < 0 ? url.slice(pathStart) : url.slice(pathStart, hash);
}
