import type { AccessLog } from "../../../src/access-log/types.js";
import type { Clock } from "../../../src/clock/clock.js";
import { AddressList } from "../../../src/policies/address-list.js";
import { clientAddress } from "../../../src/policies/client-address.js";
import { PolicyForbiddenError, refusingPolicy } from "../../../src/policies/policy-refusal.js";
import type { CallerPolicies } from "../../../src/policies/policy-schema.js";
import { type AttemptCaller, logRefused } from "../lock/access-attempt.js";
import type { HeaderLookup } from "../lock/request-headers.js";
import type { AdmittedCaller } from "./admit-caller.js";

/** How a server enforces pools' caller policies. */
export interface CallerPolicyChecks {
  /** Proxies whose `X-Forwarded-For` hop is believed; null: none (the socket's address counts). */
  trustedProxies: AddressList | null;
  accessLog: AccessLog | undefined;
  clock: Clock;
}

/** A pool's policies compiled once per catalog version (the directory caches pool records). */
interface CompiledPolicies {
  ipAllowlist: AddressList | null;
}

const compiled = new WeakMap<CallerPolicies, CompiledPolicies>();

function compile(policies: CallerPolicies): CompiledPolicies {
  let found = compiled.get(policies);
  if (!found) {
    found = {
      ipAllowlist: policies.ipAllowlist ? AddressList.parse(policies.ipAllowlist) : null,
    };
    compiled.set(policies, found);
  }
  return found;
}

/**
 * The checks of {@link enforceCallerPolicies} for one app: `trustedProxies` (CIDRs, the
 * server setting) parsed once.
 *
 * @example
 * ```ts
 * const checks = callerPolicyChecks({ trustedProxies: ["10.0.0.0/8"], accessLog, clock });
 * ```
 */
export function callerPolicyChecks(options: {
  trustedProxies?: readonly string[] | undefined;
  accessLog: AccessLog | undefined;
  clock: Clock;
}): CallerPolicyChecks {
  const list = options.trustedProxies ?? [];
  return {
    trustedProxies: list.length > 0 ? AddressList.parse(list) : null,
    accessLog: options.accessLog,
    clock: options.clock,
  };
}

/** The request facts the policies read. */
export interface CallerRequest {
  headers: HeaderLookup;
  /** The socket's peer address. */
  peer: string | null;
  source: AttemptCaller["source"];
}

/**
 * Enforces the pool's caller policies on an attempt to take a slot (Lock API acquire,
 * proxied request, SQL request), after the key rule and before a slot is asked for: every
 * policy set must pass. A refusal throws a `PolicyForbiddenError` (403) or
 * `PolicyUnauthorizedError` (401) and is written to the access log as `refused` with the
 * policy's name. Renew and release are not checked: their slot id and key suffice.
 *
 * @example
 * ```ts
 * enforceCallerPolicies(checks, admitted, { headers, peer: "10.0.0.7", source: "lock" });
 * ```
 */
export function enforceCallerPolicies(
  checks: CallerPolicyChecks,
  admitted: AdmittedCaller,
  request: CallerRequest,
): void {
  const policies = admitted.pool.callerPolicies;
  if (policies === null) return;
  try {
    checkPolicies(checks, compile(policies), request);
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

function checkPolicies(
  checks: CallerPolicyChecks,
  policies: CompiledPolicies,
  request: CallerRequest,
): void {
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
}
