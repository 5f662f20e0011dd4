import { AddressList } from "../../../src/policies/address-list.js";
import {
  type ClaimValue,
  claimIssue,
  identityAllowed,
  isSingleIdentity,
} from "../../../src/policies/claim-checks.js";
import { PolicyUnauthorizedError } from "../../../src/policies/policy-refusal.js";
import type { AccessProxyPolicy } from "../../../src/policies/policy-schema.js";
import type { HeaderLookup } from "../lock/request-headers.js";
import { poolKeyInAuthorization } from "./caller-auth.js";
import {
  type JwtSettings,
  type JwtVerifier,
  jwtVerifier,
  presetJwt,
  TokenRejected,
} from "./jwt-verifier.js";
import type { KeySetOptions } from "./remote-key-sets.js";

// Who the caller is, as a token or a fronting proxy vouches: the jwt and accessProxy policies.

/** A bearer token in a header, verified (JWT policy, Cloudflare Access, Google IAP). */
export interface TokenCheck {
  kind: "token";
  header: string;
  verify: JwtVerifier;
  requiredClaims: Readonly<Record<string, readonly ClaimValue[]>> | undefined;
}

/** An identity header believed only from the listed proxies (oauth2-proxy and the like). */
export interface TrustedHeaderCheck {
  kind: "trusted-header";
  header: string;
  proxies: AddressList;
  allow: readonly string[] | undefined;
}

/**
 * The check of a `jwt` policy (or a token preset): its header and a cached verifier.
 *
 * @example
 * ```ts
 * const check = tokenCheck(pool.callerPolicies.jwt);
 * ```
 */
export function tokenCheck(settings: JwtSettings, keySets: KeySetOptions = {}): TokenCheck {
  return {
    kind: "token",
    header: settings.header,
    verify: jwtVerifier(settings, keySets),
    requiredClaims: settings.requiredClaims,
  };
}

/**
 * The check of an `accessProxy` policy: a token check for the Cloudflare Access and Google
 * IAP presets, the proxies and allow list for the trusted-header preset.
 *
 * @example
 * ```ts
 * const check = accessProxyCheck({ preset: "google-iap", audience: "/projects/1/apps/p" });
 * ```
 */
export function accessProxyCheck(
  policy: AccessProxyPolicy,
  keySets: KeySetOptions = {},
): TokenCheck | TrustedHeaderCheck {
  if (policy.preset === "trusted-header") {
    return {
      kind: "trusted-header",
      header: policy.header,
      proxies: AddressList.parse(policy.trustedProxies),
      allow: policy.allow,
    };
  }
  return tokenCheck(presetJwt(policy) as JwtSettings, keySets);
}

const BEARER = /^bearer[ \t]+(\S+)$/i;

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A header value as the proxy wrote it. oauth2-proxy sends an internationalised address as
 * raw UTF-8 bytes, and HTTP header values reach us one latin1 character per byte (Node and a
 * web `Headers` alike): decode them. null when they are not UTF-8 (a latin1 proxy, or bytes
 * that are no text), which then names no identity.
 */
function utf8HeaderValue(value: string): string | null {
  let highest = 0;
  for (let i = 0; i < value.length; i++) highest = Math.max(highest, value.charCodeAt(i));
  // ASCII reads the same either way; characters past one byte: a runtime decoded it already.
  if (highest < 0x80 || highest > 0xff) return value;
  try {
    return UTF8.decode(Uint8Array.from(value, (char) => char.charCodeAt(0)));
  } catch {
    return null;
  }
}

/**
 * Verifies the token a check reads (401 `PolicyUnauthorizedError` naming `policy` when it is
 * missing, invalid or its claims miss a requirement).
 *
 * @example
 * ```ts
 * await checkToken(clock.now(), "jwt", check, { headers, peer });
 * ```
 */
export async function checkToken(
  now: number,
  policy: "jwt" | "access_proxy",
  check: TokenCheck,
  request: { headers: HeaderLookup; peer: string | null },
): Promise<void> {
  const raw = request.headers.get(check.header);
  const token = check.header === "authorization" ? raw && BEARER.exec(raw)?.[1] : raw;
  if (token && check.header === "authorization" && poolKeyInAuthorization(raw)) {
    // The pool may take keys in Authorization too, but this request's Authorization is taken.
    throw new PolicyUnauthorizedError(
      policy,
      "This pool reads a JWT from Authorization: Bearer <jwt>: send the pool key in X-Svc-Key instead.",
    );
  }
  if (!token) {
    const how = check.header === "authorization" ? "Authorization: Bearer <jwt>" : check.header;
    throw new PolicyUnauthorizedError(policy, `This pool requires a verified token in ${how}.`);
  }
  let claims: Record<string, unknown>;
  try {
    claims = await check.verify(token, now);
  } catch (error) {
    const why = error instanceof TokenRejected ? error.message : "it could not be verified";
    throw new PolicyUnauthorizedError(policy, `The token in ${check.header} was refused: ${why}.`);
  }
  const issue = check.requiredClaims ? claimIssue(claims, check.requiredClaims) : null;
  if (issue !== null) {
    throw new PolicyUnauthorizedError(
      policy,
      `The token in ${check.header} was refused: ${issue}.`,
    );
  }
}

/**
 * Checks an access-proxy assertion: a verified token, or a trusted proxy's identity header
 * (believed only from that proxy's own socket address).
 *
 * @example
 * ```ts
 * await checkIdentity(clock.now(), check, { headers, peer: "10.0.0.5" });
 * ```
 */
export async function checkIdentity(
  now: number,
  check: TokenCheck | TrustedHeaderCheck,
  request: { headers: HeaderLookup; peer: string | null },
): Promise<void> {
  if (check.kind === "token") return checkToken(now, "access_proxy", check, request);
  // Only the proxy in front may vouch: its own socket address, never a forwarded one.
  if (!check.proxies.has(request.peer)) {
    throw new PolicyUnauthorizedError(
      "access_proxy",
      "This pool admits only requests through its access proxy.",
    );
  }
  const raw = request.headers.get(check.header);
  if (!raw) {
    throw new PolicyUnauthorizedError("access_proxy", `The access proxy sent no ${check.header}.`);
  }
  // Decoded before anything else: trimming the latin1 reading would cut a UTF-8 byte (0xa0).
  const identity = utf8HeaderValue(raw);
  if (identity === null || !isSingleIdentity(identity)) {
    // A list (or the header sent twice) is not one identity: never match its tail.
    throw new PolicyUnauthorizedError(
      "access_proxy",
      `The access proxy's ${check.header} must name exactly one identity, one e-mail address.`,
    );
  }
  if (!identityAllowed(identity, check.allow)) {
    throw new PolicyUnauthorizedError(
      "access_proxy",
      "The identity the access proxy vouches for is not allowed on this pool.",
    );
  }
}
