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
