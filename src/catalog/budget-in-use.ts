import { ConflictError } from "../errors.js";

/**
 * Why a budget that still has pools cannot be deleted (both catalog stores say it alike):
 * deleting it would silently drop its pools' shared ceiling and their reservations.
 *
 * @example
 * ```ts
 * throw budgetInUse("llm-provider", ["chat", "embed"]);
 * ```
 */
export function budgetInUse(budgetName: string, poolSubdomains: readonly string[]): ConflictError {
  return new ConflictError(
    `The budget "${budgetName}" still has pools (${poolSubdomains.join(", ")}): move them out ` +
      "of it or delete them first.",
  );
}

/**
 * Why a budget cannot be renamed to `name` (every catalog store says it alike): budget names
 * are unique within a team, as `sluice apply` and the dashboard find budgets by name.
 *
 * @example
 * ```ts
 * throw budgetNameTaken("llm-provider");
 * ```
 */
export function budgetNameTaken(name: string): ConflictError {
  return new ConflictError(`The team already has a budget named "${name}".`);
}
