import type { BudgetRecord, PoolRecord } from "../../src/catalog/types.js";
import { InvalidArgumentError } from "../../src/errors.js";

/** A pool as the apply file wants it: its subdomain, budget and reservation. */
export interface PlannedMembership {
  subdomain: string;
  budgetName: string | null;
  reservedConcurrent: number;
}

/**
 * Refuses an apply whose result would break a budget: reservations adding up to more than
 * its `originMaxConcurrent`. The file's own budgets are checked when it is read; this checks
 * the catalog as it will be, where pools the file does not list (kept without `--prune`)
 * still hold their reservations. A server would refuse such a budget and keep serving its old
 * ceiling, so the catalog and the running limits would disagree.
 *
 * @example
 * ```ts
 * checkBudgetCeilings(file.budgets, desiredPools, store.listPools(teamId), store.listBudgets(teamId), prune);
 * ```
 */
export function checkBudgetCeilings(
  fileBudgets: readonly { name: string; originMaxConcurrent: number | null }[],
  desired: readonly PlannedMembership[],
  existingPools: readonly PoolRecord[],
  existingBudgets: readonly BudgetRecord[],
  prune: boolean,
): void {
  const ceilings = new Map(existingBudgets.map((b) => [b.name, b.originMaxConcurrent]));
  for (const budget of fileBudgets) ceilings.set(budget.name, budget.originMaxConcurrent);
  const budgetNameById = new Map(existingBudgets.map((budget) => [budget.id, budget.name]));
  const listed = new Set(desired.map((pool) => pool.subdomain));
  const kept: PlannedMembership[] = prune
    ? []
    : existingPools
        .filter((pool) => !listed.has(pool.subdomain))
        .map((pool) => ({
          subdomain: pool.subdomain,
          budgetName: pool.budgetId === null ? null : (budgetNameById.get(pool.budgetId) ?? null),
          reservedConcurrent: pool.reservedConcurrent,
        }));
  const problems: string[] = [];
  for (const [name, ceiling] of ceilings) {
    if (ceiling === null) continue;
    const members = [...desired, ...kept].filter((pool) => pool.budgetName === name);
    const reserved = members.reduce((sum, pool) => sum + pool.reservedConcurrent, 0);
    if (reserved <= ceiling) continue;
    const shares = members
      .filter((pool) => pool.reservedConcurrent > 0)
      .map((pool) => {
        const note = listed.has(pool.subdomain) ? "" : ", not in this file";
        return `${pool.subdomain} ${pool.reservedConcurrent}${note}`;
      });
    problems.push(
      `Budget "${name}": its pools would reserve ${reserved} (${shares.join("; ")}), more than its originMaxConcurrent ${ceiling}.`,
    );
  }
  if (problems.length > 0) {
    throw new InvalidArgumentError(
      `${problems.join(" ")} Lower the reservations, raise the ceiling, or move the pools out of the budget.`,
    );
  }
}
