import {
  bodyDigestHex,
  canonicalString,
  pathAndQueryOf,
  type SignedBody,
} from "../signing/canonical-request.js";
import { hmacBase64Url } from "../signing/sign-request.js";
import { sameText } from "../signing/verify-signature.js";

/** Headers of a signed caller request (lower case). */
export const REQUEST_SIGNATURE_HEADERS = {
  timestamp: "x-svc-request-timestamp",
  nonce: "x-svc-request-nonce",
  signature: "x-svc-request-signature",
} as const;

/** First line of the string a caller signs: it can never be mistaken for an origin signature's. */
export const CALLER_SIGNATURE_VERSION = "sluice-caller-v1";

/** Default allowed distance between a signed request's timestamp and the server's clock. */
export const DEFAULT_REQUEST_SKEW_MS = 300_000;

const NONCE = /^[A-Za-z0-9_-]{16,128}$/;
const TIMESTAMP = /^\d{1,16}$/;
/** Epoch ms of 2001-09-09: any smaller value is far likelier seconds than a 1970s clock. */
const SECONDS_LOOK_ALIKE = 1e12;

/** The fields a caller's request signature covers. */
export interface CallerSignatureFields {
  /** Epoch ms. */
  timestamp: number;
  /** 16-128 characters of `A-Z a-z 0-9 _ -`, never reused within the skew window. */
  nonce: string;
  method: string;
  /** Path and query exactly as sent. */
  pathAndQuery: string;
  /** Hex SHA-256 of the body bytes (of none when there is no body). */
  bodyDigest: string;
  /** Id of the pool key the request presents. */
  keyId: string;
}

/**
 * The string a caller signs, lines joined by `\n`: `sluice-caller-v1`, then the origin
 * signing scheme's canonical string (version, timestamp, method, path and query, body
 * digest, key id; see `docs/origin-signing.md`), then the nonce.
 *
 * @example
 * ```ts
 * callerSignatureBase({ timestamp: 1700000000000, nonce: "n0nce-0123456789ab", method: "POST",
 *   pathAndQuery: "/pools/llm/lock/acquire", bodyDigest: bodyDigestHex("{}"), keyId: "12" });
 * ```
 */
export function callerSignatureBase(fields: CallerSignatureFields): string {
  return `${CALLER_SIGNATURE_VERSION}\n${canonicalString(fields)}\n${fields.nonce}`;
}

/** What {@link signLockRequest} signs. */
export interface SignLockRequestInput {
  /** The key's request-signing secret (`slc_req_…`), shown once when the key was minted. */
  secret: string;
  /** Id of the pool key sent with the request. */
  keyId: string | number;
  method: string;
  /**
   * The URL the request goes to, or its path and query. An absolute URL (string or `URL`) is
   * read as `fetch` reads it (WHATWG URL: non-ASCII characters and spaces percent-encoded, dot
   * segments resolved), so the signature covers what `fetch` sends. A path (`/v1/chat?x=1`)
   * is signed exactly as given: send that very request-target.
   */
  url: string | URL;
  body?: SignedBody;
  /** Epoch ms; default `Date.now()`. */
  timestamp?: number;
  /** Default 24 random bytes, base64url. */
  nonce?: string;
}

/**
 * Signs a request to a pool that has the `hmac` caller policy (Lock API acquire, proxied
 * request or SQL): returns the headers to add beside the pool key. Sign each request once:
 * the nonce makes a second sending of the same headers a replay (401).
 *
 * @example
 * ```ts
 * import { signLockRequest } from "sluice";
 * const body = JSON.stringify({ waitMs: 2000 });
 * const url = "https://sluice.example/pools/llm/lock/acquire";
 * const headers = signLockRequest({ secret, keyId: 12, method: "POST", url, body });
 * await fetch(url, { method: "POST", body, headers: { ...headers, "x-svc-key": key, "content-type": "application/json" } });
 * ```
 */
export function signLockRequest(input: SignLockRequestInput): Record<string, string> {
  const timestamp = input.timestamp ?? Date.now();
  const nonce = input.nonce ?? randomNonce();
  const base = callerSignatureBase({
    timestamp,
    nonce,
    method: input.method,
    pathAndQuery: sentPathAndQuery(input.url),
    bodyDigest: bodyDigestHex(input.body),
    keyId: String(input.keyId),
  });
  return {
    [REQUEST_SIGNATURE_HEADERS.timestamp]: String(timestamp),
    [REQUEST_SIGNATURE_HEADERS.nonce]: nonce,
    [REQUEST_SIGNATURE_HEADERS.signature]: hmacBase64Url(input.secret, base),
  };
}

/**
 * The request-target a client sends for `url`. fetch (and undici, axios, got) parse an
 * absolute URL with the WHATWG parser first: `/v1/café` goes out as `/v1/caf%C3%A9`, `/a/./b`
 * as `/a/b`. Signing the string as written would then never match what the server receives.
 */
function sentPathAndQuery(url: string | URL): string {
  if (typeof url === "string" && (url.startsWith("/") || !URL.canParse(url))) {
    return pathAndQueryOf(url);
  }
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

function randomNonce(): string {
  const bytes = new Uint8Array(24);
  globalThis.crypto.getRandomValues(bytes);
  return Buffer.from(bytes).toString("base64url");
}

/** Why a signed request was refused (before its nonce is looked at). */
export type RequestSignatureFailure =
  | "missing_headers"
  | "malformed_timestamp"
  | "malformed_nonce"
  | "stale_timestamp"
  | "mismatch";

/** The signature headers as received. */
export interface PresentedSignature {
  timestamp: string | null;
  nonce: string | null;
  signature: string | null;
}

/** What {@link checkRequestSignature} compares. */
export interface CheckRequestSignatureInput {
  presented: PresentedSignature;
  secret: string;
  keyId: string;
  method: string;
  pathAndQuery: string;
  body: SignedBody;
  now: number;
  skewMs: number;
}

/**
 * Checks a caller's signature: headers present and well-formed, timestamp within `skewMs`
 * of `now`, HMAC equal (constant time). On success returns the nonce and until when it must
 * be remembered (the timestamp's window end): the caller of this function then claims the
 * nonce, and a nonce seen before is a replay.
 *
 * @example
 * ```ts
 * const result = checkRequestSignature({ presented, secret, keyId: "12", method: "POST",
 *   pathAndQuery: "/pools/llm/lock/acquire", body, now: Date.now(), skewMs: 300_000 });
 * ```
 */
export function checkRequestSignature(
  input: CheckRequestSignatureInput,
):
  | { valid: true; nonce: string; rememberMs: number }
  | { valid: false; reason: RequestSignatureFailure } {
  const { timestamp: timestampText, nonce, signature } = input.presented;
  if (timestampText === null || nonce === null || signature === null) {
    return { valid: false, reason: "missing_headers" };
  }
  const timestamp = Number(timestampText);
  // Before 2001 in milliseconds is a timestamp in seconds (`date +%s`): say which unit is meant.
  if (!TIMESTAMP.test(timestampText) || timestamp < SECONDS_LOOK_ALIKE) {
    return { valid: false, reason: "malformed_timestamp" };
  }
  if (!NONCE.test(nonce)) return { valid: false, reason: "malformed_nonce" };
  if (Math.abs(input.now - timestamp) > input.skewMs) {
    return { valid: false, reason: "stale_timestamp" };
  }
  const expected = hmacBase64Url(
    input.secret,
    callerSignatureBase({
      timestamp,
      nonce,
      method: input.method,
      pathAndQuery: input.pathAndQuery,
      bodyDigest: bodyDigestHex(input.body),
      keyId: input.keyId,
    }),
  );
  if (!sameText(expected, signature)) return { valid: false, reason: "mismatch" };
  // The same headers stay acceptable until the timestamp leaves the window: remember that long.
  return { valid: true, nonce, rememberMs: timestamp + input.skewMs - input.now + 1 };
}
