import type { AccessLog } from "../../../src/access-log/types.js";
import type { PoolKeyRecord, PoolRecord } from "../../../src/catalog/types.js";
import type { Clock } from "../../../src/clock/clock.js";
import { AddressList } from "../../../src/policies/address-list.js";
import {
  type ClaimValue,
  claimIssue,
  identityAllowed,
} from "../../../src/policies/claim-checks.js";
import { clientAddress } from "../../../src/policies/client-address.js";
import type { NonceStore } from "../../../src/policies/nonce-store.js";
import {
  PolicyForbiddenError,
  PolicyUnauthorizedError,
  refusingPolicy,
} from "../../../src/policies/policy-refusal.js";
import type { AccessProxyPolicy, CallerPolicies } from "../../../src/policies/policy-schema.js";
import {
  checkRequestSignature,
  REQUEST_SIGNATURE_HEADERS,
  type RequestSignatureFailure,
} from "../../../src/policies/request-signing.js";
import { type AttemptCaller, logRefused } from "../lock/access-attempt.js";
import type { PoolDirectory } from "../lock/pool-directory.js";
import type { HeaderLookup } from "../lock/request-headers.js";
import type { AdmittedCaller } from "./admit-caller.js";
import {
  type JwtSettings,
  type JwtVerifier,
  jwtVerifier,
  presetJwt,
  TokenRejected,
} from "./jwt-verifier.js";

/** How an app enforces pools' caller policies (see {@link callerPolicyChecks}). */
export interface CallerPolicyChecks {
  /** Proxies whose `X-Forwarded-For` hop is believed; null: none (the socket's address counts). */
  trustedProxies: AddressList | null;
  /** Where signed requests' nonces are remembered. */
  nonces: NonceStore;
  directory: PoolDirectory;
  accessLog: AccessLog | undefined;
  clock: Clock;
}

/** A pool's policies compiled once per catalog version (the directory caches pool records). */
interface CompiledPolicies {
  ipAllowlist: AddressList | null;
  hmacSkewMs: number | null;
  jwt: TokenCheck | null;
  accessProxy: TokenCheck | TrustedHeaderCheck | null;
}

/** A bearer token in a header, verified (JWT policy, Cloudflare Access, Google IAP). */
interface TokenCheck {
  kind: "token";
  header: string;
  verify: JwtVerifier;
  requiredClaims: Readonly<Record<string, readonly ClaimValue[]>> | undefined;
}

/** An identity header believed only from the listed proxies (oauth2-proxy and the like). */
interface TrustedHeaderCheck {
  kind: "trusted-header";
  header: string;
  proxies: AddressList;
  allow: readonly string[] | undefined;
}

function tokenCheck(settings: JwtSettings): TokenCheck {
  return {
    kind: "token",
    header: settings.header,
    verify: jwtVerifier(settings),
    requiredClaims: settings.requiredClaims,
  };
}

function accessProxyCheck(policy: AccessProxyPolicy): TokenCheck | TrustedHeaderCheck {
  if (policy.preset === "trusted-header") {
    return {
      kind: "trusted-header",
      header: policy.header,
      proxies: AddressList.parse(policy.trustedProxies),
      allow: policy.allow,
    };
  }
  return tokenCheck(presetJwt(policy) as JwtSettings);
}

const compiled = new WeakMap<CallerPolicies, CompiledPolicies>();

function compile(policies: CallerPolicies): CompiledPolicies {
  let found = compiled.get(policies);
  if (!found) {
    found = {
      ipAllowlist: policies.ipAllowlist ? AddressList.parse(policies.ipAllowlist) : null,
      hmacSkewMs: policies.hmac ? policies.hmac.skewSeconds * 1000 : null,
      jwt: policies.jwt ? tokenCheck(policies.jwt) : null,
      accessProxy: policies.accessProxy ? accessProxyCheck(policies.accessProxy) : null,
    };
    compiled.set(policies, found);
  }
  return found;
}

/**
 * The policy checks of one app: `trustedProxies` (CIDRs, the server setting) parsed once,
 * the nonce store (memory for one server, Redis for several).
 *
 * @example
 * ```ts
 * const checks = callerPolicyChecks({ trustedProxies: ["10.0.0.0/8"], nonces, directory, accessLog, clock });
 * ```
 */
export function callerPolicyChecks(options: {
  trustedProxies?: readonly string[] | undefined;
  nonces: NonceStore;
  directory: PoolDirectory;
  accessLog: AccessLog | undefined;
  clock: Clock;
}): CallerPolicyChecks {
  const list = options.trustedProxies ?? [];
  return { ...options, trustedProxies: list.length > 0 ? AddressList.parse(list) : null };
}

/** The request facts the policies read. */
export interface CallerRequest {
  headers: HeaderLookup;
  /** The socket's peer address. */
  peer: string | null;
  source: AttemptCaller["source"];
  method: string;
  /** The request-target as received (path and query, unnormalised). */
  target: string;
  /** Reads the whole body (once; the caller keeps it): called only when a policy covers it. */
  body: () => Promise<Uint8Array>;
}

/**
 * Whether the pool's policies read the request body (then the body is buffered, not streamed).
 *
 * @example
 * ```ts
 * if (policiesReadBody(pool)) body = await readBodyLimited(request, limits, env);
 * ```
 */
export function policiesReadBody(pool: PoolRecord): boolean {
  return !!pool.callerPolicies?.hmac;
}

/**
 * Enforces the pool's caller policies on an attempt to take a slot (Lock API acquire,
 * proxied request, SQL request), after the key rule and before a slot is asked for: every
 * policy set must pass, cheapest first: IP allowlist, access-proxy assertion, JWT, then the
 * HMAC signature (the body is read only for it, and its nonce is claimed last so that only a
 * correctly signed request spends one). A refusal throws a
 * `PolicyForbiddenError` (403) or `PolicyUnauthorizedError` (401) and is written to the
 * access log as `refused` with the policy's name. Renew and release are not checked: their
 * slot id and key suffice.
 *
 * @example
 * ```ts
 * await enforceCallerPolicies(checks, admitted, { headers, peer, source: "lock", method, target, body });
 * ```
 */
export async function enforceCallerPolicies(
  checks: CallerPolicyChecks,
  admitted: AdmittedCaller,
  request: CallerRequest,
): Promise<void> {
  const policies = admitted.pool.callerPolicies;
  if (policies === null) return;
  try {
    await checkPolicies(checks, admitted, compile(policies), request);
  } catch (error) {
    const policy = refusingPolicy(error);
    if (policy !== null) {
      const caller = {
        pool: admitted.pool.subdomain,
        keyId: admitted.key?.id ?? null,
        remoteAddress: request.peer,
        source: request.source,
      };
      logRefused(checks.accessLog, caller, checks.clock.now(), policy);
    }
    throw error;
  }
}

async function checkPolicies(
  checks: CallerPolicyChecks,
  admitted: AdmittedCaller,
  policies: CompiledPolicies,
  request: CallerRequest,
): Promise<void> {
  if (policies.ipAllowlist) {
    const forwardedFor = request.headers.get("x-forwarded-for");
    const address = clientAddress(request.peer, forwardedFor, checks.trustedProxies);
    if (!policies.ipAllowlist.has(address)) {
      throw new PolicyForbiddenError(
        "ip_allowlist",
        "Your address is not in this pool's IP allowlist.",
      );
    }
  }
  if (policies.accessProxy) {
    await checkIdentity(checks, policies.accessProxy, request);
  }
  if (policies.jwt) {
    await checkToken(checks, "jwt", policies.jwt, request);
  }
  if (policies.hmacSkewMs !== null) {
    await checkSignature(checks, admitted, policies.hmacSkewMs, request);
  }
}

const BEARER = /^bearer[ \t]+(\S+)$/i;

async function checkToken(
  checks: CallerPolicyChecks,
  policy: "jwt" | "access_proxy",
  check: TokenCheck,
  request: CallerRequest,
): Promise<void> {
  const raw = request.headers.get(check.header);
  const token = check.header === "authorization" ? raw && BEARER.exec(raw)?.[1] : raw;
  if (!token) {
    const how = check.header === "authorization" ? "Authorization: Bearer <jwt>" : check.header;
    throw new PolicyUnauthorizedError(policy, `This pool requires a verified token in ${how}.`);
  }
  let claims: Record<string, unknown>;
  try {
    claims = await check.verify(token, checks.clock.now());
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

async function checkIdentity(
  checks: CallerPolicyChecks,
  check: TokenCheck | TrustedHeaderCheck,
  request: CallerRequest,
): Promise<void> {
  if (check.kind === "token") return checkToken(checks, "access_proxy", check, request);
  // Only the proxy in front may vouch: its own socket address, never a forwarded one.
  if (!check.proxies.has(request.peer)) {
    throw new PolicyUnauthorizedError(
      "access_proxy",
      "This pool admits only requests through its access proxy.",
    );
  }
  const identity = request.headers.get(check.header);
  if (!identity) {
    throw new PolicyUnauthorizedError("access_proxy", `The access proxy sent no ${check.header}.`);
  }
  if (!identityAllowed(identity, check.allow)) {
    throw new PolicyUnauthorizedError(
      "access_proxy",
      "The identity the access proxy vouches for is not allowed on this pool.",
    );
  }
}

const SIGNATURE_MESSAGES: Readonly<
  Record<RequestSignatureFailure | "no_secret" | "replay", string>
> = {
  missing_headers: `This pool requires signed requests: send ${REQUEST_SIGNATURE_HEADERS.timestamp}, ${REQUEST_SIGNATURE_HEADERS.nonce} and ${REQUEST_SIGNATURE_HEADERS.signature} (see signLockRequest).`,
  malformed_timestamp: `${REQUEST_SIGNATURE_HEADERS.timestamp} must be epoch milliseconds.`,
  malformed_nonce: `${REQUEST_SIGNATURE_HEADERS.nonce} must be 16-128 characters of A-Z, a-z, 0-9, _ and -.`,
  stale_timestamp: "The request's signature timestamp is outside the allowed clock skew.",
  mismatch:
    "The request signature does not match (method, path, query, body, timestamp, nonce or key secret).",
  no_secret:
    "This key has no request-signing secret (it was minted before the pool required signed requests): mint a new key.",
  replay: "This request's nonce was used before: sign every request anew.",
};

async function checkSignature(
  checks: CallerPolicyChecks,
  admitted: AdmittedCaller,
  skewMs: number,
  request: CallerRequest,
): Promise<void> {
  const key: PoolKeyRecord | null = admitted.key;
  const secret = key && checks.directory.requestSecret(key);
  if (!key || !secret) {
    const why = key ? "no_secret" : "missing_headers";
    throw new PolicyUnauthorizedError("hmac", SIGNATURE_MESSAGES[why]);
  }
  const { headers } = request;
  const presented = {
    timestamp: headers.get(REQUEST_SIGNATURE_HEADERS.timestamp),
    nonce: headers.get(REQUEST_SIGNATURE_HEADERS.nonce),
    signature: headers.get(REQUEST_SIGNATURE_HEADERS.signature),
  };
  // Unsigned requests are refused before their body is read.
  if (presented.timestamp === null || presented.nonce === null || presented.signature === null) {
    throw new PolicyUnauthorizedError("hmac", SIGNATURE_MESSAGES.missing_headers);
  }
  const result = checkRequestSignature({
    presented,
    secret,
    keyId: String(key.id),
    method: request.method,
    pathAndQuery: request.target,
    body: await request.body(),
    now: checks.clock.now(),
    skewMs,
  });
  if (!result.valid) throw new PolicyUnauthorizedError("hmac", SIGNATURE_MESSAGES[result.reason]);
  const fresh = await checks.nonces.claim(
    `${key.poolId}:${key.id}:${result.nonce}`,
    result.rememberMs,
  );
  if (!fresh) throw new PolicyUnauthorizedError("hmac", SIGNATURE_MESSAGES.replay);
}
