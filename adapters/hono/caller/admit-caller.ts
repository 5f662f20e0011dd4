import type { PoolKeyRecord, PoolRecord } from "../../../src/catalog/types.js";
import { ForbiddenError } from "../../../src/errors.js";
import type { PoolDirectory } from "../lock/pool-directory.js";
import type { HeaderLookup } from "../lock/request-headers.js";
import { authenticateCaller, refuseUnknownPool } from "./caller-auth.js";
import type { IpPolicy } from "./ip-policy.js";

/** Pool subdomains are DNS labels: a longer name is never looked up. */
export const MAX_LABEL_LENGTH = 63;

/** A caller let into a pool. */
export interface AdmittedCaller {
  pool: PoolRecord;
  /** null for a keyless caller of an open pool. */
  key: PoolKeyRecord | null;
}

/**
 * The checks every Lock API and proxy request passes, in order: the caller's key (401
 * `unauthorized`; see {@link authenticateCaller}, whose `release` option this passes on),
 * the IP policy (403 `unauthorized`). A pool that does not exist answers the 401 an existing
 * pool needing a key would give the same request ({@link refuseUnknownPool}): only a caller
 * with a valid key of a pool learns that it exists.
 *
 * @example
 * ```ts
 * const { pool, key } = await admitCaller({ directory, ipPolicy }, "llm", request.headers, "10.0.0.7", Date.now());
 * ```
 */
export async function admitCaller(
  checks: { directory: PoolDirectory; ipPolicy?: IpPolicy | undefined },
  subdomain: string,
  headers: HeaderLookup,
  remoteAddress: string | null,
  now: number,
  options?: { release?: boolean },
): Promise<AdmittedCaller> {
  // Pool subdomains are DNS labels (≤ 63 characters): a longer name is not looked up.
  const pool =
    subdomain.length > MAX_LABEL_LENGTH ? undefined : await checks.directory.pool(subdomain);
  if (!pool) refuseUnknownPool(headers);
  const key = await authenticateCaller(checks.directory, pool, headers, now, options);
  if (checks.ipPolicy && !checks.ipPolicy(pool, remoteAddress)) {
    throw new ForbiddenError("Your address is not allowed to use this pool.");
  }
  return { pool, key };
}
