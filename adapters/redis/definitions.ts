import type { LearnedLimits, StorePoolConfig } from "../../src/store/types.js";

/**
 * What this process asked the store to hold: pool configurations and budget origins, plus
 * removals Redis has not confirmed yet. Used to re-create pools Redis lost, to push
 * everything again when Redis comes back, and to define the same pools in the local
 * fallback store.
 *
 * @example
 * ```ts
 * const definitions = new Definitions();
 * definitions.definePool("llm", config);
 * for (const [pool, config] of definitions.pools) await engine.upsertPool(pool, config);
 * ```
 */
export class Definitions {
  readonly pools = new Map<string, StorePoolConfig>();
  readonly budgets = new Map<string, number | null>();
  /** The learned limits last pushed per pool, for a pool Redis lost (recovery pushes them). */
  readonly learned = new Map<string, LearnedLimits>();
  /** Removals that failed while Redis was unreachable, replayed on recovery. */
  readonly removedPools = new Set<string>();
  readonly removedBudgets = new Set<string>();

  definePool(pool: string, config: StorePoolConfig): void {
    this.pools.set(pool, { ...config, budget: config.budget ? { ...config.budget } : null });
    this.removedPools.delete(pool);
  }

  removePool(pool: string): void {
    this.pools.delete(pool);
    this.learned.delete(pool);
    this.removedPools.add(pool);
  }

  defineBudget(budget: string, originMaxConcurrent: number | null): void {
    this.budgets.set(budget, originMaxConcurrent);
    this.removedBudgets.delete(budget);
  }

  removeBudget(budget: string): void {
    this.budgets.delete(budget);
    this.removedBudgets.add(budget);
  }
}
