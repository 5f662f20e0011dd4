import { timingSafeEqual } from "node:crypto";
import {
  bodyDigestHex,
  canonicalString,
  pathAndQueryOf,
  SIGNATURE_HEADERS,
  type SignedBody,
} from "./canonical-request.js";
import { hmacBase64Url } from "./sign-request.js";

/** Default allowed distance between the signature's timestamp and the verifier's clock. */
export const DEFAULT_SIGNATURE_TOLERANCE_MS = 300_000;

/** Request headers as origins usually hold them: a `Headers`, or Node's header record. */
export type SignatureHeaders =
  | Headers
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** What {@link verifySignature} checks. */
export interface VerifySignatureInput {
  /** The key's signing secret, or a lookup by key id (for origins that accept several keys). */
  secret: string | ((keyId: string) => string | null | undefined);
  method: string;
  /** Node's `request.url` (path and query, preferred: unnormalised) or the full URL. */
  url: string | URL;
  headers: SignatureHeaders;
  /** The raw body bytes as received. */
  body?: SignedBody;
  /** Allowed clock distance in ms; default 300 000 (5 minutes). */
  toleranceMs?: number;
  /** The verifier's clock, epoch ms; default `Date.now()`. */
  now?: number;
}

/** Why a signature was refused. */
export type SignatureFailure =
  | "missing_headers"
  | "malformed_timestamp"
  | "stale_timestamp"
  | "unknown_key"
  | "mismatch";

/** What {@link verifySignature} found: the signing key and time, or why the request is refused. */
export type VerifySignatureResult =
  | { valid: true; keyId: string; timestamp: number }
  | { valid: false; reason: SignatureFailure };

const TIMESTAMP = /^\d{1,16}$/;

/**
 * Checks a request signed by the Sluice pool proxy: the timestamp is within `toleranceMs`
 * of `now`, and the HMAC over version, timestamp, method, path and query, body digest and key
 * id matches (compared in constant time). Reject the request unless `valid` is true.
 *
 * @example
 * ```ts
 * import { verifySignature } from "sluice";
 * const result = verifySignature({ secret: process.env.SLUICE_SIGNING_SECRET!, method: req.method!,
 *   url: req.url!, headers: req.headers, body: rawBody });
 * if (!result.valid) return res.writeHead(401).end(result.reason);
 * ```
 */
export function verifySignature(input: VerifySignatureInput): VerifySignatureResult {
  const timestampText = headerValue(input.headers, SIGNATURE_HEADERS.timestamp);
  const keyId = headerValue(input.headers, SIGNATURE_HEADERS.keyId);
  const signature = headerValue(input.headers, SIGNATURE_HEADERS.signature);
  if (timestampText === null || keyId === null || signature === null) {
    return { valid: false, reason: "missing_headers" };
  }
  if (!TIMESTAMP.test(timestampText)) return { valid: false, reason: "malformed_timestamp" };
  const timestamp = Number(timestampText);
  const tolerance = input.toleranceMs ?? DEFAULT_SIGNATURE_TOLERANCE_MS;
  if (Math.abs((input.now ?? Date.now()) - timestamp) > tolerance) {
    return { valid: false, reason: "stale_timestamp" };
  }
  const secret = typeof input.secret === "function" ? input.secret(keyId) : input.secret;
  if (!secret) return { valid: false, reason: "unknown_key" };
  const expected = hmacBase64Url(
    secret,
    canonicalString({
      timestamp,
      method: input.method,
      pathAndQuery: pathAndQueryOf(input.url),
      bodyDigest: bodyDigestHex(input.body),
      keyId,
    }),
  );
  return sameText(expected, signature)
    ? { valid: true, keyId, timestamp }
    : { valid: false, reason: "mismatch" };
}

/** Whether two texts are equal, compared in constant time (lengths are public). */
export function sameText(expected: string, presented: string): boolean {
  const a = Buffer.from(expected, "utf8");
  const b = Buffer.from(presented, "utf8");
  // Lengths are public (the signature length is fixed); contents are compared in constant time.
  return a.length === b.length && timingSafeEqual(a, b);
}

function headerValue(headers: SignatureHeaders, name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  let value = headers[name];
  if (value === undefined) {
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === name) {
        value = headers[key];
        break;
      }
    }
  }
  if (value === undefined) return null;
  return typeof value === "string" ? value : (value[0] ?? null);
}
