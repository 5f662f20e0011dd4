import { ForbiddenError, UnauthorizedError } from "../errors.js";

/** The caller policies a pool may set; the name is what the access log and metrics record. */
export const CALLER_POLICY_NAMES = ["ip_allowlist", "hmac", "jwt", "access_proxy"] as const;
export type CallerPolicyName = (typeof CALLER_POLICY_NAMES)[number];

/**
 * A caller turned away by a pool's policy with 403 (contract section 7: an IP allowlist miss
 * is 403 `unauthorized`). `policy` names it for the access log and metrics; the message
 * never holds a secret.
 *
 * @example
 * ```ts
 * throw new PolicyForbiddenError("ip_allowlist", "Your address is not allowed to use this pool.");
 * ```
 */
export class PolicyForbiddenError extends ForbiddenError {
  constructor(
    readonly policy: CallerPolicyName,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A caller turned away by a pool's policy with 401 (missing or invalid proof, or a replay).
 *
 * @example
 * ```ts
 * throw new PolicyUnauthorizedError("hmac", "The request signature does not match.");
 * ```
 */
export class PolicyUnauthorizedError extends UnauthorizedError {
  constructor(
    readonly policy: CallerPolicyName,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The policy that refused, when `error` is a policy refusal; null otherwise.
 *
 * @example
 * ```ts
 * refusingPolicy(new PolicyForbiddenError("ip_allowlist", "…")); // "ip_allowlist"
 * ```
 */
export function refusingPolicy(error: unknown): CallerPolicyName | null {
  return error instanceof PolicyForbiddenError || error instanceof PolicyUnauthorizedError
    ? error.policy
    : null;
}
