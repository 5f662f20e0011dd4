import { credentialHeaderIssue, credentialValueIssue } from "./credential-rules.js";
import type { SecretBox } from "./encryption.js";
import type { CredentialRecord, PoolKeyRecord, PoolRecord } from "./types.js";
import { fieldIssue, throwIfIssues } from "./validation.js";

/** A managed upstream credential in clear, for the proxy to attach to origin requests only. */
export interface UpstreamCredential {
  header: string;
  value: string;
}

/**
 * Encrypts an upstream credential for storage on a pool. Throws InvalidArgumentError when the
 * header name or value could not be sent as they are (see {@link credentialHeaderIssue}).
 *
 * @example
 * ```ts
 * store.upsertPool(teamId, { ...input, credential: sealCredential(box, "authorization", "Bearer sk-…") });
 * ```
 */
export function sealCredential(box: SecretBox, header: string, value: string): CredentialRecord {
  const headerIssue = credentialHeaderIssue(header);
  const valueIssue = credentialValueIssue(value);
  throwIfIssues("credential", [
    ...(headerIssue ? [fieldIssue("credential.header", headerIssue)] : []),
    ...(valueIssue ? [fieldIssue("credential.value", valueIssue)] : []),
  ]);
  return { header: header.toLowerCase(), value: box.seal(value) };
}

/**
 * The pool's upstream credential in clear, or null when it has none. Throws
 * SecretUnreadableError when the stored value cannot be decrypted.
 *
 * @example
 * ```ts
 * const credential = decryptCredential(box, pool);
 * if (credential) headers.set(credential.header, credential.value);
 * ```
 */
export function decryptCredential(box: SecretBox, pool: PoolRecord): UpstreamCredential | null {
  if (!pool.credential) return null;
  return { header: pool.credential.header, value: box.open(pool.credential.value) };
}

/**
 * The key's origin-signing secret in clear, or null when the key has none.
 *
 * @example
 * ```ts
 * const secret = decryptSigningSecret(box, key);
 * if (secret) headers.set("x-svc-signature", sign(secret, request));
 * ```
 */
export function decryptSigningSecret(box: SecretBox, key: PoolKeyRecord): string | null {
  return key.signingSecret ? box.open(key.signingSecret) : null;
}

/**
 * The key's request-signing secret (`hmac` caller policy) in clear, or null when it has none.
 *
 * @example
 * ```ts
 * const secret = decryptRequestSecret(box, key);
 * ```
 */
export function decryptRequestSecret(box: SecretBox, key: PoolKeyRecord): string | null {
  return key.requestSecret ? box.open(key.requestSecret) : null;
}
