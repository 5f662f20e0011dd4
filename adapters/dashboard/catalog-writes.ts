import type { PoolInput, PoolRecord } from "../../src/catalog/types.js";
import type { DashboardDeps } from "./dashboard-env.js";

/** A stored pool as the input that writes it back unchanged. */
export function poolInputOf(pool: PoolRecord): PoolInput {
  const { id: _id, teamId: _teamId, createdAt: _createdAt, updatedAt: _updatedAt, ...input } = pool;
  return input;
}

/**
 * Hands a catalog write to the running governor at once (new limits apply in place, held
 * slots kept) instead of at the next periodic sync. A sync failure is logged, not shown:
 * the write itself succeeded and the periodic sync retries.
 *
 * @example
 * ```ts
 * store.upsertPool(teamId, input);
 * await applyToGovernor(deps);
 * ```
 */
export async function applyToGovernor(deps: DashboardDeps): Promise<void> {
  try {
    await deps.syncCatalog?.();
  } catch (error) {
    (deps.logError ?? console.error)(error);
  }
}
