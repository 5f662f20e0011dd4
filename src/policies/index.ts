/**
 * Caller policies of a pool (IP allowlist, …): the rules that need no HTTP. The Lock API and
 * the pool proxy enforce them in `adapters/hono/caller/`; see `docs/caller-policies.md`.
 */
export { AddressList, cidrIssue, normalizeAddress } from "./address-list.js";
export { clientAddress } from "./client-address.js";
export type { CallerPolicyName } from "./policy-refusal.js";
export {
  CALLER_POLICY_NAMES,
  PolicyForbiddenError,
  PolicyUnauthorizedError,
  refusingPolicy,
} from "./policy-refusal.js";
export type { CallerPolicies } from "./policy-schema.js";
export { CallerPoliciesSchema } from "./policy-schema.js";
