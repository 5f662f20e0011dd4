import { createHash, randomBytes } from "node:crypto";

/** Prefixes make a leaked secret recognisable and say what it opens. */
export const ACCESS_TOKEN_PREFIX = "slc_mat_";
export const REFRESH_TOKEN_PREFIX = "slc_mrt_";
export const CODE_PREFIX = "slc_mac_";
export const CLIENT_ID_PREFIX = "slc_client_";

/**
 * A new secret: the prefix and 256 random bits in base64url.
 *
 * @example
 * ```ts
 * newOAuthSecret(ACCESS_TOKEN_PREFIX); // "slc_mat_…"
 * ```
 */
export function newOAuthSecret(prefix: string): string {
  return prefix + randomBytes(32).toString("base64url");
}

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Whether a PKCE code verifier matches its S256 challenge (RFC 7636 §4.6). Malformed
 * verifiers never match.
 *
 * @example
 * ```ts
 * pkceMatches(verifier, challengeFromAuthorize);
 * ```
 */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false;
  return createHash("sha256").update(verifier).digest("base64url") === challenge;
}

/**
 * Whether a string can be an S256 challenge (base64url of 32 bytes).
 *
 * @example
 * ```ts
 * isS256Challenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"); // true
 * ```
 */
export function isS256Challenge(challenge: string): boolean {
  return CHALLENGE.test(challenge);
}
