import { budgetPoolIds, budgetUnallocated } from "../../../src/catalog/governor-mapping.js";
import { allowedMethodsFor, readPathsFor } from "../../../src/catalog/key-access.js";
import type { MintedPoolKey } from "../../../src/catalog/pool-keys.js";
import type {
  BudgetRecord,
  PoolKeyRecord,
  PoolRecord,
  TeamRecord,
  UserRecord,
} from "../../../src/catalog/types.js";
import type {
  BudgetResource,
  PoolKeyResource,
  PoolResource,
  TeamResource,
  UserResource,
} from "./resource-schemas.js";

/*
 * Catalog records → Control API resources (contract section 2, snake_case). Each mapper
 * copies fields one by one, so a new record field (a hash, a ciphertext) is never sent by
 * accident.
 */

/**
 * An epoch-ms instant as an ISO-8601 UTC date-time, or null.
 *
 * @example
 * ```ts
 * isoDateTime(0); // "1970-01-01T00:00:00.000Z"
 * isoDateTime(null); // null
 * ```
 */
export function isoDateTime(epochMs: number | null): string | null {
  return epochMs === null ? null : new Date(epochMs).toISOString();
}

/**
 * @example
 * ```ts
 * serializeUser({ id: 1, name: "Ada", email: "ada@acme.test" });
 * ```
 */
export function serializeUser(user: UserRecord): UserResource {
  return { id: user.id, name: user.name, email: user.email };
}

/**
 * @example
 * ```ts
 * serializeTeam({ id: 1, name: "Acme", slug: "acme" });
 * ```
 */
export function serializeTeam(team: TeamRecord): TeamResource {
  return { id: team.id, name: team.name, slug: team.slug };
}

/**
 * A budget with its member pool ids and unallocated capacity. `teamPools` may be every pool
 * of the team: pools of other budgets are ignored.
 *
 * @example
 * ```ts
 * serializeBudget(budget, store.listPools(teamId));
 * // { id, name, pool_ids: [3, 5], origin_max_concurrent: 40, unallocated: 10 }
 * ```
 */
export function serializeBudget(
  budget: BudgetRecord,
  teamPools: readonly PoolRecord[],
): BudgetResource {
  return {
    id: budget.id,
    name: budget.name,
    pool_ids: budgetPoolIds(budget, teamPools),
    origin_max_concurrent: budget.originMaxConcurrent,
    unallocated: budgetUnallocated(budget, teamPools),
  };
}

/**
 * A pool. `budget` is the pool's budget record; undefined or null when it has none (or the
 * budget no longer exists), which serializes as `budget: null`.
 *
 * @example
 * ```ts
 * serializePool(pool, pool.budgetId === null ? null : store.getBudget(teamId, pool.budgetId));
 * ```
 */
export function serializePool(
  pool: PoolRecord,
  budget: BudgetRecord | null | undefined,
): PoolResource {
  return {
    id: pool.id,
    name: pool.name,
    description: pool.description,
    subdomain: pool.subdomain,
    backend: pool.backend,
    max_concurrent: pool.maxConcurrent,
    require_key: pool.requireKey,
    // A database pool's read-role connection string is its managed credential.
    has_credential: pool.credential !== null || pool.database !== null,
    budget:
      budget && budget.id === pool.budgetId
        ? { id: budget.id, name: budget.name, reserved_concurrent: pool.reservedConcurrent }
        : null,
  };
}

/**
 * A pool key without secrets: what list, show and revoke responses carry. `read_paths` is
 * present only when the pool scopes extra read methods to path prefixes.
 *
 * @example
 * ```ts
 * serializePoolKey(pool, revokedKey); // { id, label, last_four, access, allowed_methods, …, revoked_at: "2025-…" }
 * ```
 */
export function serializePoolKey(pool: PoolRecord, key: PoolKeyRecord): PoolKeyResource {
  const resource: PoolKeyResource = {
    id: key.id,
    label: key.label,
    last_four: key.lastFour,
    access: key.access,
    allowed_methods: allowedMethodsFor(pool, key),
  };
  const readPaths = readPathsFor(pool);
  if (readPaths !== null) resource.read_paths = readPaths;
  resource.expires_at = isoDateTime(key.expiresAt);
  resource.revoked_at = isoDateTime(key.revokedAt);
  resource.created_at = isoDateTime(key.createdAt);
  return resource;
}

/**
 * A freshly minted key: {@link serializePoolKey} plus the plaintext `key` and, when the pool
 * signs requests to its origin, the `signing_secret`, and when it has the `hmac` caller
 * policy, the `request_signing_secret`. Use only for the creation response:
 * these secrets are never retrievable again.
 *
 * @example
 * ```ts
 * c.json({ data: serializeMintedPoolKey(pool, catalog.mintPoolKey(request)) }, 201);
 * ```
 */
export function serializeMintedPoolKey(pool: PoolRecord, minted: MintedPoolKey): PoolKeyResource {
  const resource = serializePoolKey(pool, minted.key);
  resource.key = minted.plaintext;
  if (minted.signingSecret !== undefined) resource.signing_secret = minted.signingSecret;
  if (minted.requestSecret !== undefined) resource.request_signing_secret = minted.requestSecret;
  return resource;
}
