/**
 * Origin signing: the pool proxy signs each origin request of a pool with origin signing on,
 * and origins verify it with {@link verifySignature}. The scheme is in `docs/origin-signing.md`.
 */
export type { CanonicalRequestFields, SignedBody } from "./canonical-request.js";
export {
  bodyDigestHex,
  canonicalString,
  pathAndQueryOf,
  SIGNATURE_HEADERS,
  SIGNATURE_VERSION,
} from "./canonical-request.js";
export type { SignRequestInput } from "./sign-request.js";
export { hmacBase64Url, signRequest } from "./sign-request.js";
export type {
  SignatureFailure,
  SignatureHeaders,
  VerifySignatureInput,
  VerifySignatureResult,
} from "./verify-signature.js";
export { DEFAULT_SIGNATURE_TOLERANCE_MS, verifySignature } from "./verify-signature.js";
