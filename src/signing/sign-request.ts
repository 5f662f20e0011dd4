import { createHmac } from "node:crypto";
import {
  bodyDigestHex,
  canonicalString,
  pathAndQueryOf,
  SIGNATURE_HEADERS,
  type SignedBody,
} from "./canonical-request.js";

/** What {@link signRequest} signs. */
export interface SignRequestInput {
  /** The pool key's signing secret (`slc_sig_…`), used as the HMAC key in UTF-8. */
  secret: string;
  /** Id of the pool key the request came in with. */
  keyId: string | number;
  method: string;
  /** The origin URL, or its path and query, exactly as the request will be sent. */
  url: string | URL;
  body?: SignedBody;
  /** Epoch ms of signing. */
  timestamp: number;
}

/**
 * base64url HMAC-SHA256 of a canonical string with a secret.
 *
 * @example
 * ```ts
 * hmacBase64Url("slc_sig_…", canonicalString(fields));
 * ```
 */
export function hmacBase64Url(secret: string, canonical: string): string {
  return createHmac("sha256", secret).update(canonical, "utf8").digest("base64url");
}

/**
 * Signs one origin request (see `docs/origin-signing.md`) and returns the headers to add:
 * `x-svc-signature-timestamp`, `x-svc-signature-key-id` and `x-svc-signature`.
 *
 * @example
 * ```ts
 * const headers = signRequest({ secret, keyId: 12, method: "POST", url: "/v1/chat",
 *   body: '{"q":1}', timestamp: Date.now() });
 * // { "x-svc-signature-timestamp": "1700000000000", "x-svc-signature-key-id": "12", "x-svc-signature": "…" }
 * ```
 */
export function signRequest(input: SignRequestInput): Record<string, string> {
  const keyId = String(input.keyId);
  const canonical = canonicalString({
    timestamp: input.timestamp,
    method: input.method,
    pathAndQuery: pathAndQueryOf(input.url),
    bodyDigest: bodyDigestHex(input.body),
    keyId,
  });
  return {
    [SIGNATURE_HEADERS.timestamp]: String(input.timestamp),
    [SIGNATURE_HEADERS.keyId]: keyId,
    [SIGNATURE_HEADERS.signature]: hmacBase64Url(input.secret, canonical),
  };
}
