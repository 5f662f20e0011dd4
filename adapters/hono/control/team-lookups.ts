import * as v from "valibot";
import type { BudgetRecord, CatalogStore, PoolRecord } from "../../../src/catalog/types.js";
import { BudgetNotFoundError, PoolNotFoundError } from "../../../src/errors.js";
import { PathIdSchema } from "./request-schemas.js";

/*
 * Lookups scoped to the token's team. Another team's budget or pool is "not found", exactly
 * like one that does not exist, so responses never reveal what other teams have.
 */

/**
 * A numeric path id, or null when the segment is not a positive integer.
 *
 * @example
 * ```ts
 * parsePathId("12"); // 12
 * parsePathId("12abc"); // null
 * ```
 */
export function parsePathId(segment: string): number | null {
  const result = v.safeParse(PathIdSchema, segment);
  return result.success ? result.output : null;
}

/**
 * The team's budget named by a path segment; BudgetNotFoundError (404) otherwise.
 *
 * @example
 * ```ts
 * const budget = await requireTeamBudget(store, auth.team.id, c.req.param("budget"));
 * ```
 */
export async function requireTeamBudget(
  store: CatalogStore,
  teamId: number,
  segment: string,
): Promise<BudgetRecord> {
  const budgetId = parsePathId(segment);
  const budget = budgetId === null ? undefined : await store.getBudget(teamId, budgetId);
  if (!budget) throw new BudgetNotFoundError(segment);
  return budget;
}

/**
 * The team's pool with that subdomain; PoolNotFoundError (404) otherwise.
 *
 * @example
 * ```ts
 * const pool = await requireTeamPool(store, auth.team.id, c.req.param("pool"));
 * ```
 */
export async function requireTeamPool(
  store: CatalogStore,
  teamId: number,
  subdomain: string,
): Promise<PoolRecord> {
  const pool = await store.getPoolBySubdomain(teamId, subdomain);
  if (!pool) throw new PoolNotFoundError(subdomain);
  return pool;
}

/**
 * The pool's budget record, or null when it has none or the budget is gone.
 *
 * @example
 * ```ts
 * serializePool(pool, await budgetOfPool(store, pool));
 * ```
 */
export async function budgetOfPool(
  store: CatalogStore,
  pool: PoolRecord,
): Promise<BudgetRecord | null> {
  if (pool.budgetId === null) return null;
  return (await store.getBudget(pool.teamId, pool.budgetId)) ?? null;
}

/**
 * The team's budgets by id, to serialize many pools without a lookup each.
 *
 * @example
 * ```ts
 * const budgets = await teamBudgetsById(store, teamId);
 * pools.map((pool) => serializePool(pool, budgets.get(pool.budgetId ?? -1)));
 * ```
 */
export async function teamBudgetsById(
  store: CatalogStore,
  teamId: number,
): Promise<Map<number, BudgetRecord>> {
  return new Map((await store.listBudgets(teamId)).map((budget) => [budget.id, budget]));
}
