import {
  API_TOKEN_PREFIX,
  POOL_KEY_PREFIX,
  REQUEST_SECRET_PREFIX,
  SIGNING_SECRET_PREFIX,
} from "../../../src/catalog/secrets.js";
import type { PoolKeyRecord, PoolRecord } from "../../../src/catalog/types.js";
import { UnauthorizedError } from "../../../src/errors.js";
import type { PoolDirectory } from "../lock/pool-directory.js";
import type { HeaderLookup } from "../lock/request-headers.js";

/** Header that carries a pool key (contract section 5, Lock API rule 1). */
export const POOL_KEY_HEADER = "x-svc-key";

const AUTHORIZATION_KEY = /^(?:bearer|service)[ \t]+(\S+)[ \t]*$/i;
const BASIC_CREDENTIALS = /^[ \t]*basic[ \t]+(\S+)/i;
/** A Sluice secret anywhere in a header value, whatever scheme (or none) wraps it. */
const SLUICE_SECRET = new RegExp(
  `(?:${[POOL_KEY_PREFIX, API_TOKEN_PREFIX, SIGNING_SECRET_PREFIX, REQUEST_SECRET_PREFIX].join("|")})[A-Za-z0-9_-]*`,
);

/**
 * The Sluice secret inside an `Authorization` value (a token starting `slc_key_`, `slc_tok_`
 * `slc_sig_` or `slc_req_`, in any shape: `Bearer <secret>`, `Token <secret>`, bare, with
 * more after it, or as the user or password of base64-encoded `Basic` credentials); null
 * otherwise. Other values are the caller's own upstream credentials and are left alone; a
 * value carrying a Sluice secret is never sent upstream.
 *
 * @example
 * ```ts
 * sluiceSecretInAuthorization("Token slc_key_abc…"); // "slc_key_abc…"
 * sluiceSecretInAuthorization(`Basic ${btoa("user:slc_key_abc")}`); // "slc_key_abc"
 * sluiceSecretInAuthorization("Bearer sk-upstream"); // null
 * ```
 */
export function sluiceSecretInAuthorization(value: string | null | undefined): string | null {
  if (!value) return null;
  const plain = SLUICE_SECRET.exec(value)?.[0];
  if (plain !== undefined) return plain;
  const basic = BASIC_CREDENTIALS.exec(value)?.[1];
  if (basic === undefined) return null;
  // "user:password", either part may be the secret; latin1 keeps every byte one character.
  return SLUICE_SECRET.exec(Buffer.from(basic, "base64").toString("latin1"))?.[0] ?? null;
}

/**
 * The pool key inside an `Authorization` value, when it is exactly `Bearer <key>` or
 * `Service <key>` with a token shaped like a pool key (`slc_key_…`); null otherwise.
 *
 * @example
 * ```ts
 * poolKeyInAuthorization("Service slc_key_abc…"); // "slc_key_abc…"
 * poolKeyInAuthorization("Bearer sk-upstream"); // null
 * ```
 */
export function poolKeyInAuthorization(value: string | null | undefined): string | null {
  if (!value) return null;
  const token = AUTHORIZATION_KEY.exec(value)?.[1];
  return token?.startsWith(POOL_KEY_PREFIX) ? token : null;
}

/**
 * Turns away a Control API token or a signing secret presented where a pool key goes
 * (`X-Svc-Key` or `Authorization`), on every pool: a token is not a pool key and never
 * admits traffic (contract section 1), and the mistake is worth reporting rather than
 * forwarding an admin secret to the origin.
 */
function refuseOtherSecrets(headers: HeaderLookup): void {
  if (
    isOtherSecret(headers.get(POOL_KEY_HEADER)?.trim()) ||
    isOtherSecret(sluiceSecretInAuthorization(headers.get("authorization")))
  ) {
    throw new UnauthorizedError(
      "A Control API token or signing secret is not a pool key: send a pool key (slc_key_…).",
    );
  }
}

/** A secret of Sluice's own that is not a pool key (it never admits traffic). */
function isOtherSecret(presented: string | null | undefined): boolean {
  return (
    !!presented &&
    (presented.startsWith(API_TOKEN_PREFIX) ||
      presented.startsWith(SIGNING_SECRET_PREFIX) ||
      presented.startsWith(REQUEST_SECRET_PREFIX))
  );
}

/**
 * The pool key a request presents: `X-Svc-Key` first, else `Authorization` when the pool
 * accepts keys there. null when the request presents none.
 *
 * @example
 * ```ts
 * presentedPoolKey(request.headers, pool); // "slc_key_…" or null
 * ```
 */
export function presentedPoolKey(
  headers: HeaderLookup,
  pool: Pick<PoolRecord, "allowAuthorizationHeader">,
): string | null {
  const direct = headers.get(POOL_KEY_HEADER);
  if (direct !== null) return direct.trim();
  if (!pool.allowAuthorizationHeader) return null;
  return poolKeyInAuthorization(headers.get("authorization"));
}

/** The 401 for a request that offers no pool key, on a pool that needs one. */
const KEY_REQUIRED =
  "A pool key is required: send it in X-Svc-Key (or in Authorization: Bearer <key> where the pool accepts it there).";
/** The 401 for a request that offers a pool key this pool does not accept. */
const KEY_NOT_VALID =
  "The pool key is not valid for this pool (unknown, expired or revoked, or sent in Authorization to a pool that takes it in X-Svc-Key only).";

/**
 * Authenticates the caller of a pool (Lock API and proxy alike). Returns the key, or null
 * for a keyless caller of a pool with `requireKey` off. Throws {@link UnauthorizedError}
 * (401) when a required key is missing, when a presented key is not a live key of this
 * pool — also on an open pool: a revoked or foreign key is a mistake worth reporting — and
 * when a Control API token or signing secret is presented instead of a pool key. For a
 * release (`options.release`), a key of this pool revoked or expired since it took its slot
 * still authenticates: giving a slot back must always be possible.
 *
 * The 401's message depends on the request only, never on the pool's settings, so that
 * {@link refuseUnknownPool} can answer a pool that does not exist with the very same body.
 *
 * @example
 * ```ts
 * const key = await authenticateCaller(directory, pool, c.req.raw.headers, clock.now());
 * ```
 */
export async function authenticateCaller(
  directory: PoolDirectory,
  pool: PoolRecord,
  headers: HeaderLookup,
  now: number,
  options?: { release?: boolean },
): Promise<PoolKeyRecord | null> {
  refuseOtherSecrets(headers);
  const presented = presentedPoolKey(headers, pool);
  if (presented === null) {
    if (!pool.requireKey) return null;
    throw unauthorized(headers);
  }
  const key = await directory.key(pool, presented, now, { retired: options?.release === true });
  if (!key) throw unauthorized(headers);
  return key;
}

/**
 * The answer for a pool that does not exist: the 401 {@link authenticateCaller} gives the
 * same request on a pool that needs a key (no key of a missing pool can be valid). A caller
 * without a valid key thus cannot tell a missing pool from an existing one.
 *
 * @example
 * ```ts
 * if (!pool) refuseUnknownPool(request.headers);
 * ```
 */
export function refuseUnknownPool(headers: HeaderLookup): never {
  refuseOtherSecrets(headers);
  throw unauthorized(headers);
}

/** Whether the request offers a pool key in either place, whatever the pool accepts. */
function offersPoolKey(headers: HeaderLookup): boolean {
  return (
    headers.get(POOL_KEY_HEADER) !== null ||
    poolKeyInAuthorization(headers.get("authorization")) !== null
  );
}

function unauthorized(headers: HeaderLookup): UnauthorizedError {
  return new UnauthorizedError(offersPoolKey(headers) ? KEY_NOT_VALID : KEY_REQUIRED);
}
