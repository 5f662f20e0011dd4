import type { BudgetRecord, PoolRecord } from "../../../src/catalog/types.js";
import { PoolNotFoundError } from "../../../src/errors.js";
import { serializePool } from "../../hono/control/serializers.js";
import type { ToolAccess, ToolDeps } from "../tool-kit.js";
import type { PoolDetail } from "./schemas.js";

/**
 * The caller's team's pool with that subdomain. Another team's pool is "not found", exactly
 * like one that does not exist.
 *
 * @example
 * ```ts
 * const pool = await teamPool(deps, access, args.pool);
 * ```
 */
export async function teamPool(
  deps: ToolDeps,
  access: ToolAccess,
  subdomain: string,
): Promise<PoolRecord> {
  const pool = await deps.catalog.store.getPoolBySubdomain(access.teamId, subdomain);
  if (!pool) throw new PoolNotFoundError(subdomain, `Your team has no pool "${subdomain}".`);
  return pool;
}

/**
 * A pool with its limits, for `get_pool` and `list_pools`.
 *
 * @example
 * ```ts
 * poolDetail(pool, budget);
 * ```
 */
export function poolDetail(pool: PoolRecord, budget: BudgetRecord | null | undefined): PoolDetail {
  return {
    ...serializePool(pool, budget),
    origin: pool.origin,
    queue_size: pool.queueSize,
    queue_timeout_ms: pool.queueTimeoutMs,
    rpm: pool.rpm,
    request_timeout_ms: pool.requestTimeoutMs,
    adaptive: pool.adaptive,
  };
}
