import { InvalidArgumentError } from "../errors.js";
import type { BudgetSettings, PoolSettingsInput } from "../governor/settings.js";
import type { BudgetRecord, PoolRecord } from "./types.js";

/**
 * The governor's name for a catalog budget: its id as a string (budget names may change and
 * may repeat across teams; ids do neither).
 *
 * @example
 * ```ts
 * governor.defineBudget(governorBudgetId(budget), budgetToGovernorSettings(budget));
 * ```
 */
export function governorBudgetId(budget: Pick<BudgetRecord, "id">): string {
  return String(budget.id);
}

/**
 * Maps a catalog pool to governor pool settings. `budget` is the pool's budget record, or
 * null/undefined when the pool has none or it no longer exists (the pool then runs without
 * one). Passing a budget other than the pool's own is a programming error.
 *
 * @example
 * ```ts
 * const budget = pool.budgetId === null ? null : store.getBudget(pool.teamId, pool.budgetId);
 * governor.definePool(pool.subdomain, poolToGovernorSettings(pool, budget));
 * ```
 */
export function poolToGovernorSettings(
  pool: PoolRecord,
  budget: BudgetRecord | null | undefined,
): PoolSettingsInput {
  if (budget && (budget.id !== pool.budgetId || budget.teamId !== pool.teamId)) {
    throw new InvalidArgumentError(
      `Budget ${budget.id} is not the budget of pool "${pool.subdomain}".`,
    );
  }
  return {
    maxConcurrent: pool.maxConcurrent,
    queue: { size: pool.queueSize, timeoutMs: pool.queueTimeoutMs },
    rpm: pool.rpm,
    requestTimeoutMs: pool.requestTimeoutMs,
    termMs: pool.termMs,
    renewIntervalMs: pool.renewIntervalMs,
    adaptive: pool.adaptive,
    budget: budget
      ? { id: governorBudgetId(budget), reservedConcurrent: pool.reservedConcurrent }
      : null,
  };
}

/**
 * Maps a catalog budget to governor budget settings.
 *
 * @example
 * ```ts
 * budgetToGovernorSettings({ id: 1, teamId: 1, name: "LLM", originMaxConcurrent: 40 });
 * // { originMaxConcurrent: 40 }
 * ```
 */
export function budgetToGovernorSettings(budget: BudgetRecord): BudgetSettings {
  return { originMaxConcurrent: budget.originMaxConcurrent };
}

/**
 * Ids of the budget's member pools, in the order given.
 *
 * @example
 * ```ts
 * budgetPoolIds(budget, store.listPools(teamId)); // [3, 5]
 * ```
 */
export function budgetPoolIds(
  budget: Pick<BudgetRecord, "id">,
  pools: readonly Pick<PoolRecord, "id" | "budgetId">[],
): number[] {
  const ids: number[] = [];
  for (const pool of pools) if (pool.budgetId === budget.id) ids.push(pool.id);
  return ids;
}

/**
 * The Budget resource's `unallocated`: origin ceiling minus the reservations of member pools,
 * never negative; 0 when the budget has no ceiling. Pools of other budgets are ignored, so
 * the whole team's pool list may be passed.
 *
 * @example
 * ```ts
 * budgetUnallocated({ originMaxConcurrent: 40, ... }, pools); // 40 − Σ reservedConcurrent
 * ```
 */
export function budgetUnallocated(
  budget: Pick<BudgetRecord, "id" | "originMaxConcurrent">,
  pools: readonly Pick<PoolRecord, "budgetId" | "reservedConcurrent">[],
): number {
  if (budget.originMaxConcurrent === null) return 0;
  let reserved = 0;
  for (const pool of pools) if (pool.budgetId === budget.id) reserved += pool.reservedConcurrent;
  return Math.max(0, budget.originMaxConcurrent - reserved);
}
