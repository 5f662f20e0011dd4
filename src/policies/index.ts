/**
 * Caller policies of a pool (IP allowlist, HMAC request signing): the rules that need no HTTP. The Lock API and
 * the pool proxy enforce them in `adapters/hono/caller/`; see `docs/caller-policies.md`.
 */
export { AddressList, cidrIssue, normalizeAddress } from "./address-list.js";
export { clientAddress } from "./client-address.js";
export type { NonceStore } from "./nonce-store.js";
export { DEFAULT_MAX_NONCES, MemoryNonceStore } from "./nonce-store.js";
export type { CallerPolicyName } from "./policy-refusal.js";
export {
  CALLER_POLICY_NAMES,
  PolicyForbiddenError,
  PolicyUnauthorizedError,
  refusingPolicy,
} from "./policy-refusal.js";
export type { CallerPolicies } from "./policy-schema.js";
export { CallerPoliciesSchema } from "./policy-schema.js";
export type {
  CallerSignatureFields,
  CheckRequestSignatureInput,
  PresentedSignature,
  RequestSignatureFailure,
  SignLockRequestInput,
} from "./request-signing.js";
export {
  CALLER_SIGNATURE_VERSION,
  callerSignatureBase,
  checkRequestSignature,
  DEFAULT_REQUEST_SKEW_MS,
  REQUEST_SIGNATURE_HEADERS,
  signLockRequest,
} from "./request-signing.js";
