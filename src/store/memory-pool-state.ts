import type { TimerHandle } from "../clock/clock.js";
import { GrantLog } from "./grant-log.js";
import { HolderIndex } from "./holder-index.js";
import type { LearnedLimits, SharedLearned, StorePoolConfig } from "./types.js";
import { WaiterQueue } from "./waiter-queue.js";

/** What keeps a pool from granting now (SEMANTICS.md, `canGrant`). */
export type Obstacle = "concurrency" | "budget" | "paused" | "rpm";

/** One pool of the memory store. */
export interface PoolState {
  name: string;
  config: StorePoolConfig;
  learned: LearnedLimits;
  /** `learned` with its version, handed out by releases and inspections (replaced, never changed). */
  shared: SharedLearned;
  /** Insertion order is grant order. */
  holders: HolderIndex;
  waiters: WaiterQueue;
  /** `effectiveLimit` and `effectiveRpm` of SEMANTICS.md, kept current by {@link refreshLimits}. */
  limit: number;
  rpm: number | null;
  grantLog: GrantLog;
  budget: BudgetState | null;
  gateTimer: TimerHandle | null;
  gateTimerAt: number;
}

/** One budget of the memory store. */
export interface BudgetState {
  name: string;
  origin: number | null;
  /** Join order: the order sibling pools are served after a release. */
  members: Set<PoolState>;
}

const NOTHING_LEARNED: LearnedLimits = Object.freeze({
  concurrency: null,
  rpm: null,
  pausedUntil: 0,
});

/**
 * A new, empty pool (no budget yet; its limits are refreshed by the caller).
 *
 * @example
 * ```ts
 * const pool = newPoolState("llm", config);
 * ```
 */
export function newPoolState(name: string, config: StorePoolConfig): PoolState {
  return {
    name,
    config,
    learned: NOTHING_LEARNED,
    shared: { version: 0, learned: NOTHING_LEARNED },
    holders: new HolderIndex(),
    waiters: new WaiterQueue(),
    limit: config.maxConcurrent,
    rpm: config.rpm,
    grantLog: new GrantLog(),
    budget: null,
    gateTimer: null,
    gateTimerAt: Number.POSITIVE_INFINITY,
  };
}

/**
 * Recomputes the effective limit and RPM after a change of configuration or learned limits.
 *
 * @example
 * ```ts
 * pool.learned = learned;
 * refreshLimits(pool);
 * ```
 */
export function refreshLimits(pool: PoolState): void {
  const learnedLimit = pool.learned.concurrency;
  const max = pool.config.maxConcurrent;
  pool.limit = learnedLimit === null ? max : Math.min(max, learnedLimit);
  const configured = pool.config.rpm;
  const learnedRpm = pool.learned.rpm;
  if (configured === null) pool.rpm = learnedRpm;
  else pool.rpm = learnedRpm === null ? configured : Math.min(configured, learnedRpm);
  if (pool.rpm !== null) pool.grantLog.ensureCapacity(pool.rpm);
}

/**
 * Whether the pool's budget admits one more holder of this pool (SEMANTICS.md, "Budget").
 *
 * @example
 * ```ts
 * if (!budgetAdmits(pool)) return "budget";
 * ```
 */
export function budgetAdmits(pool: PoolState): boolean {
  return budgetRoom(pool) !== 0;
}

/**
 * How many more slots the pool's budget lets it take now: what is left of its reservation
 * plus the unreserved share nobody borrowed yet, within what is left of the ceiling. Null
 * when no budget binds.
 *
 * @example
 * ```ts
 * const room = budgetRoom(pool); // 0: the budget refuses the next grant
 * ```
 */
export function budgetRoom(pool: PoolState): number | null {
  const budget = pool.budget;
  if (!budget || budget.origin === null) return null;
  let heldTotal = 0;
  let reservedTotal = 0;
  let borrowed = 0;
  for (const member of budget.members) {
    const held = member.holders.size;
    const reserved = member.config.budget?.reservedConcurrent ?? 0;
    heldTotal += held;
    reservedTotal += reserved;
    if (held > reserved) borrowed += held - reserved;
  }
  const ownReserved = Math.max(
    0,
    (pool.config.budget?.reservedConcurrent ?? 0) - pool.holders.size,
  );
  const borrowable = Math.max(0, budget.origin - reservedTotal - borrowed);
  return Math.max(0, Math.min(budget.origin - heldTotal, ownReserved + borrowable));
}

/**
 * The gates that open by themselves with time.
 *
 * @example
 * ```ts
 * if (isTimeGate(obstacle)) armGateTimer(pool, now + gateOpensIn(pool, now));
 * ```
 */
export function isTimeGate(obstacle: Obstacle): obstacle is "paused" | "rpm" {
  return obstacle === "paused" || obstacle === "rpm";
}
