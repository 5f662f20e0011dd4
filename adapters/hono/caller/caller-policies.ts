import type { AccessLog } from "../../../src/access-log/types.js";
import type { PoolKeyRecord } from "../../../src/catalog/types.js";
import type { Clock } from "../../../src/clock/clock.js";
import { AddressList } from "../../../src/policies/address-list.js";
import { clientAddress } from "../../../src/policies/client-address.js";
import { MemoryNonceStore, type NonceStore } from "../../../src/policies/nonce-store.js";
import {
  PolicyForbiddenError,
  PolicyUnauthorizedError,
  refusingPolicy,
} from "../../../src/policies/policy-refusal.js";
import type { CallerPolicies } from "../../../src/policies/policy-schema.js";
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
  accessProxyCheck,
  checkIdentity,
  checkToken,
  type TokenCheck,
  type TrustedHeaderCheck,
  tokenCheck,
} from "./identity-checks.js";
import type { JwksNetwork } from "./key-set-fetch.js";
import type { KeySetOptions } from "./remote-key-sets.js";

/** How an app enforces pools' caller policies (see {@link callerPolicyChecks}). */
export interface CallerPolicyChecks {
  /** Proxies whose `X-Forwarded-For` hop is believed; null: none (the socket's address counts). */
  trustedProxies: AddressList | null;
  /** Where signed requests' nonces are remembered. */
  nonces: NonceStore;
  directory: PoolDirectory;
  accessLog: AccessLog | undefined;
  clock: Clock;
  /** How JWKS URLs are fetched (timeout) and where an unreachable one is reported. */
  keySets: KeySetOptions;
  /** The pools' policies compiled by this app, once per catalog version. */
  compiled: WeakMap<CallerPolicies, CompiledPolicies>;
}

/** A pool's policies compiled once per catalog version (the directory caches pool records). */
interface CompiledPolicies {
  ipAllowlist: AddressList | null;
  hmacSkewMs: number | null;
  jwt: TokenCheck | null;
  accessProxy: TokenCheck | TrustedHeaderCheck | null;
}

function compile(checks: CallerPolicyChecks, policies: CallerPolicies): CompiledPolicies {
  let found = checks.compiled.get(policies);
  if (!found) {
    const { keySets } = checks;
    found = {
      ipAllowlist: policies.ipAllowlist ? AddressList.parse(policies.ipAllowlist) : null,
      hmacSkewMs: policies.hmac ? policies.hmac.skewSeconds * 1000 : null,
      jwt: policies.jwt ? tokenCheck(policies.jwt, keySets) : null,
      accessProxy: policies.accessProxy ? accessProxyCheck(policies.accessProxy, keySets) : null,
    };
    checks.compiled.set(policies, found);
  }
  return found;
}

/**
 * The policy checks of one app: `trustedProxies` (CIDRs, the server setting) parsed once,
 * the nonce store (Redis for several servers; default one in memory on `clock`), the JWKS fetch timeout and
 * network, and where a key set that cannot be fetched is reported (once per outage).
 *
 * @example
 * ```ts
 * const checks = callerPolicyChecks({ trustedProxies: ["10.0.0.0/8"], nonces, directory, accessLog, clock, jwksTimeoutMs: 5000, jwksNetwork: "public", logError });
 * ```
 */
export function callerPolicyChecks(options: {
  trustedProxies?: readonly string[] | undefined;
  nonces?: NonceStore | undefined;
  directory: PoolDirectory;
  accessLog: AccessLog | undefined;
  clock: Clock;
  jwksTimeoutMs?: number | undefined;
  /** Where JWKS URLs may be fetched from; default `public` (see `KeySetOptions.network`). */
  jwksNetwork?: JwksNetwork | undefined;
  logError?: ((error: unknown) => void) | undefined;
}): CallerPolicyChecks {
  const { trustedProxies, jwksTimeoutMs, jwksNetwork, logError, nonces, ...rest } = options;
  const list = trustedProxies ?? [];
  return {
    ...rest,
    nonces: nonces ?? new MemoryNonceStore({ now: () => options.clock.now() }),
    trustedProxies: list.length > 0 ? AddressList.parse(list) : null,
    keySets: { timeoutMs: jwksTimeoutMs, network: jwksNetwork, onUnavailable: logError },
    compiled: new WeakMap(),
  };
}

/**
 * The caller's address for the access log: behind the server's trusted proxies the one they
 * forwarded (the address the IP allowlist judges), else the socket's peer as it is. A row
 * that named only the load balancer would not tell whom an allowlist refused.
 *
 * @example
 * ```ts
 * loggedAddress(checks, "10.0.0.2", headers); // "203.0.113.7" with trustedProxies 10.0.0.0/8
 * ```
 */
export function loggedAddress(
  checks: Pick<CallerPolicyChecks, "trustedProxies">,
  peer: string | null,
  headers: HeaderLookup,
): string | null {
  if (checks.trustedProxies === null) return peer;
  return clientAddress(peer, headers.get("x-forwarded-for"), checks.trustedProxies);
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
    await checkPolicies(checks, admitted, compile(checks, policies), request);
  } catch (error) {
    const policy = refusingPolicy(error);
    if (policy !== null) {
      const caller = {
        pool: admitted.pool.subdomain,
        keyId: admitted.key?.id ?? null,
        remoteAddress: loggedAddress(checks, request.peer, request.headers),
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
    await checkIdentity(checks.clock.now(), policies.accessProxy, request);
  }
  if (policies.jwt) {
    await checkToken(checks.clock.now(), "jwt", policies.jwt, request);
  }
  if (policies.hmacSkewMs !== null) {
    await checkSignature(checks, admitted, policies.hmacSkewMs, request);
  }
}

const SIGNATURE_MESSAGES: Readonly<
  Record<RequestSignatureFailure | "no_secret" | "no_key" | "replay", string>
> = {
  missing_headers: `This pool requires signed requests: send ${REQUEST_SIGNATURE_HEADERS.timestamp}, ${REQUEST_SIGNATURE_HEADERS.nonce} and ${REQUEST_SIGNATURE_HEADERS.signature} (see signLockRequest).`,
  malformed_timestamp: `${REQUEST_SIGNATURE_HEADERS.timestamp} must be epoch milliseconds (13 digits; seconds times 1000).`,
  malformed_nonce: `${REQUEST_SIGNATURE_HEADERS.nonce} must be 16-128 characters of A-Z, a-z, 0-9, _ and -.`,
  stale_timestamp: "The request's signature timestamp is outside the allowed clock skew.",
  mismatch:
    "The request signature does not match (method, path, query, body, timestamp, nonce or key secret).",
  no_secret:
    "This key has no request-signing secret (it was minted before the pool required signed requests): mint a new key.",
  no_key:
    "This pool requires signed requests, signed with a pool key's request-signing secret: send that key in X-Svc-Key with the signature headers.",
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
    // A keyless caller of an open pool has no secret to sign with, whatever it sends.
    const why = key ? "no_secret" : "no_key";
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
