import { hash, randomBytes, timingSafeEqual } from "node:crypto";

/** Prefixes make a leaked secret recognisable (secret scanners, logs) and say what it opens. */
export const API_TOKEN_PREFIX = "slc_tok_";
export const POOL_KEY_PREFIX = "slc_key_";
export const SIGNING_SECRET_PREFIX = "slc_sig_";
/** Start of a key's request-signing secret (the `hmac` caller policy). */
export const REQUEST_SECRET_PREFIX = "slc_req_";

/** 32 random bytes in unpadded base64url are always 43 characters. */
const SECRET_BODY_LENGTH = 43;
const SECRET_BODY = /^[A-Za-z0-9_-]{43}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

function randomSecret(prefix: string): string {
  return prefix + randomBytes(32).toString("base64url");
}

/**
 * A new Control API token: `slc_tok_` + 256 random bits. Show it once; store only {@link hashSecret}.
 *
 * @example
 * ```ts
 * const plaintext = generateApiToken(); // "slc_tok_3q2-…" (51 characters)
 * ```
 */
export function generateApiToken(): string {
  return randomSecret(API_TOKEN_PREFIX);
}

/**
 * A new pool key: `slc_key_` + 256 random bits. Show it once; store only {@link hashSecret}.
 *
 * @example
 * ```ts
 * const plaintext = generatePoolKey(); // "slc_key_…"
 * ```
 */
export function generatePoolKey(): string {
  return randomSecret(POOL_KEY_PREFIX);
}

/**
 * A new origin-signing secret: `slc_sig_` + 256 random bits. The server needs it again to
 * sign requests, so it is stored encrypted (SecretBox), never hashed.
 *
 * @example
 * ```ts
 * const secret = generateSigningSecret(); // "slc_sig_…"
 * ```
 */
export function generateSigningSecret(): string {
  return randomSecret(SIGNING_SECRET_PREFIX);
}

/**
 * A new request-signing secret (`slc_req_…`): the caller signs its requests with it on a
 * pool with the `hmac` caller policy.
 *
 * @example
 * ```ts
 * generateRequestSecret(); // "slc_req_…"
 * ```
 */
export function generateRequestSecret(): string {
  return randomSecret(REQUEST_SECRET_PREFIX);
}

/**
 * Whether `value` has the shape of a secret with this prefix. Lets callers turn away junk
 * without hashing or touching the store.
 *
 * @example
 * ```ts
 * hasSecretShape(header, POOL_KEY_PREFIX); // false for "Bearer abc"
 * ```
 */
export function hasSecretShape(value: string, prefix: string): boolean {
  return (
    value.length === prefix.length + SECRET_BODY_LENGTH &&
    value.startsWith(prefix) &&
    SECRET_BODY.test(value.slice(prefix.length))
  );
}

/**
 * Hex SHA-256 of a secret, the only form in which tokens and keys are stored.
 *
 * A fast unsalted hash is right here, unlike for passwords: every token and key carries 256
 * bits from the CSPRNG, so there is no dictionary to try and no brute force that a slow hash
 * would meaningfully slow down. A fast hash also keeps per-request key checks cheap and lets
 * the store look secrets up by an indexed hash column.
 *
 * @example
 * ```ts
 * store.insertApiToken({ ...fields, tokenHash: hashSecret(plaintext) });
 * ```
 */
export function hashSecret(plaintext: string): string {
  // One-shot `hash` (Node ≥ 20.12): the same digest as createHash at a third of the cost,
  // and it runs on every Lock API and proxy request.
  return hash("sha256", plaintext, "hex");
}

/**
 * Constant-time comparison of two hex SHA-256 digests. Malformed input is never equal.
 *
 * @example
 * ```ts
 * if (!secretsEqual(record.tokenHash, hashSecret(presented))) throw new UnauthorizedError();
 * ```
 */
export function secretsEqual(aHex: string, bHex: string): boolean {
  if (!SHA256_HEX.test(aHex) || !SHA256_HEX.test(bHex)) return false;
  return timingSafeEqual(Buffer.from(aHex, "hex"), Buffer.from(bHex, "hex"));
}

/**
 * The last four characters, kept in clear so people can tell their keys apart.
 *
 * @example
 * ```ts
 * lastFour("slc_key_abcd…wxyz"); // "wxyz"
 * ```
 */
export function lastFour(plaintext: string): string {
  return plaintext.slice(-4);
}
