import type { PoolKeyRecord, PoolRecord } from "../../../src/catalog/types.js";
import { ForbiddenError, PoolNotFoundError } from "../../../src/errors.js";
import { authenticateCaller } from "./caller-auth.js";
import type { IpPolicy } from "./lock-deps.js";
import type { PoolDirectory } from "./pool-directory.js";
import type { HeaderLookup } from "./request-headers.js";

const MAX_LABEL_LENGTH = 63;

/** A caller let into a pool. */
export interface AdmittedCaller {
  pool: PoolRecord;
  /** null for a keyless caller of an open pool. */
  key: PoolKeyRecord | null;
}

/**
 * The checks every Lock API and proxy request passes, in order: the pool exists (404
 * `not_found`), the caller's key (401 `unauthorized`; see {@link authenticateCaller}, whose
 * `release` option this passes on), the IP policy (403 `unauthorized`).
 *
 * @example
 * ```ts
 * const { pool, key } = admitCaller({ directory, ipPolicy }, "llm", request.headers, "10.0.0.7", Date.now());
 * ```
 */
export function admitCaller(
  checks: { directory: PoolDirectory; ipPolicy?: IpPolicy | undefined },
  subdomain: string,
  headers: HeaderLookup,
  remoteAddress: string | null,
  now: number,
  options?: { release?: boolean },
): AdmittedCaller {
  // Pool subdomains are DNS labels (≤ 63 characters): a longer name is not looked up, and is
  // not echoed back whole in the error.
  if (subdomain.length > MAX_LABEL_LENGTH) {
    throw new PoolNotFoundError(`${subdomain.slice(0, MAX_LABEL_LENGTH)}…`);
  }
  const pool = checks.directory.pool(subdomain);
  if (!pool) throw new PoolNotFoundError(subdomain);
  const key = authenticateCaller(checks.directory, pool, headers, now, options);
  if (checks.ipPolicy && !checks.ipPolicy(pool, remoteAddress)) {
    throw new ForbiddenError("Your address is not allowed to use this pool.");
  }
  return { pool, key };
}
