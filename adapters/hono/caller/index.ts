export type { AdmittedCaller } from "./admit-caller.js";
export { admitCaller } from "./admit-caller.js";
export {
  authenticateCaller,
  POOL_KEY_HEADER,
  poolKeyInAuthorization,
  presentedPoolKey,
  sluiceSecretInAuthorization,
} from "./caller-auth.js";
export type { CallerPolicyChecks, CallerRequest } from "./caller-policies.js";
export { callerPolicyChecks, enforceCallerPolicies } from "./caller-policies.js";
export type { ClientAddressReader } from "./client-address-reader.js";
export { clientAddressReader } from "./client-address-reader.js";
export type { IpPolicy } from "./ip-policy.js";
export type { JwksNetwork } from "./key-set-fetch.js";
export { JWKS_MAX_BYTES } from "./key-set-fetch.js";
export { remoteAddressOf } from "./remote-address.js";
export { JWKS_TIMEOUT_MS, KeySetUnavailableError } from "./remote-key-sets.js";
