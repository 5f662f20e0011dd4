import type { Clock, TimerHandle } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import { PoolNotFoundError } from "../errors.js";
import type { BudgetState, Obstacle, PoolState } from "./memory-pool-state.js";
import {
  budgetAdmits,
  budgetRoom,
  isTimeGate,
  newPoolState,
  refreshLimits,
} from "./memory-pool-state.js";
import type {
  HeldSlot,
  LearnedLimits,
  PoolFigures,
  PoolSnapshot,
  SlotStore,
  StoreAcquireRequest,
  StoreAcquireResult,
  StoreCancelResult,
  StoreInspectResult,
  StoreListener,
  StorePoolConfig,
  StoreReleaseResult,
  StoreRenewResult,
} from "./types.js";

const NOT_RELEASED: StoreReleaseResult = Object.freeze({ released: false });
const NOT_FOUND: StoreRenewResult = Object.freeze({ type: "not_found" });
const UNKNOWN: StoreCancelResult = Object.freeze({ type: "unknown" });
const CANCELLED: StoreCancelResult = Object.freeze({ type: "cancelled" });

/**
 * The reference {@link SlotStore}: all state in this process, every operation synchronous
 * and O(1) on the hot path (no I/O, no polling; one timer for lease expiry, one per pool for
 * a closed time gate). The rules are in `src/store/SEMANTICS.md`.
 *
 * @example
 * ```ts
 * const clock = new ManualClock();
 * const governor = createGovernor({ store: new MemorySlotStore({ clock }), clock });
 * ```
 */
export class MemorySlotStore implements SlotStore {
  readonly kind = "memory";
  readonly returnsWaiters = true;
  /** The store's clock; a governor on the same clock reuses the store's readings. */
  readonly clock: Clock;
  private readonly pools = new Map<string, PoolState>();
  private readonly budgets = new Map<string, BudgetState>();
  private listener: StoreListener = { granted() {}, reclaimed() {} };
  private leaseTimer: TimerHandle | null = null;
  private leaseTimerAt = Number.POSITIVE_INFINITY;

  constructor(options: { clock?: Clock } = {}) {
    this.clock = options.clock ?? systemClock;
  }

  now(): number {
    return this.clock.now();
  }

  setListener(listener: StoreListener): void {
    this.listener = listener;
  }

  upsertBudget(budget: string, originMaxConcurrent: number | null): void {
    const state = this.budgetState(budget);
    state.origin = originMaxConcurrent;
    this.serveMembers(state, this.clock.now());
  }

  removeBudget(budget: string): void {
    const state = this.budgets.get(budget);
    if (!state) return;
    state.origin = null;
    if (state.members.size === 0) this.budgets.delete(budget);
    else this.serveMembers(state, this.clock.now());
  }

  upsertPool(name: string, config: StorePoolConfig): void {
    let pool = this.pools.get(name);
    if (!pool) {
      pool = newPoolState(name, config);
      this.pools.set(name, pool);
    }
    pool.config = { ...config, budget: config.budget ? { ...config.budget } : null };
    this.joinBudget(pool, config.budget?.id ?? null);
    refreshLimits(pool);
    this.serveAround(pool, this.clock.now());
  }

  removePool(name: string): void {
    const pool = this.pools.get(name);
    if (!pool) return;
    this.joinBudget(pool, null);
    this.clearGateTimer(pool);
    this.pools.delete(name);
  }

  acquire(name: string, request: StoreAcquireRequest): StoreAcquireResult {
    const pool = this.pools.get(name);
    if (!pool) throw new PoolNotFoundError(name);
    const now = request.now ?? this.clock.now();
    const { waitMs } = request;
    const queueSize = pool.config.queueSize;
    if (pool.waiters.size > 0) {
      this.serve(pool, now);
    }
    if (pool.waiters.size > 0) {
      // Newcomers never overtake waiters, and behind them no turn can be estimated; a time
      // gate that holds everyone back is named, with its opening as the earliest retry.
      if (waitMs <= 0) return this.rejectedBehindWaiters(pool, now);
      if (pool.waiters.size >= queueSize) return this.rejected(pool, "queue_full", null);
      return this.enqueue(pool, request, now);
    }
    const obstacle = this.obstacle(pool, now);
    if (obstacle === null) {
      const slot = this.grant(pool, request.slotId, now);
      return { type: "granted", slot, figures: this.figures(pool) };
    }
    const canQueue = waitMs > 0 && queueSize > 0;
    if (!isTimeGate(obstacle)) {
      return canQueue ? this.enqueue(pool, request, now) : this.rejected(pool, obstacle, null);
    }
    const opensIn = this.gateOpensIn(pool, now);
    if (canQueue && opensIn <= waitMs) {
      const queued = this.enqueue(pool, request, now);
      this.armGateTimer(pool, now + opensIn);
      return queued;
    }
    return this.rejected(pool, obstacle, opensIn);
  }

  private rejectedBehindWaiters(pool: PoolState, now: number): StoreAcquireResult {
    const obstacle = this.obstacle(pool, now);
    if (obstacle !== null && isTimeGate(obstacle)) {
      return this.rejected(pool, obstacle, this.gateOpensIn(pool, now));
    }
    return this.rejected(pool, "concurrency", null);
  }

  cancel(name: string, slotId: string): StoreCancelResult {
    const pool = this.pools.get(name);
    if (!pool) return UNKNOWN;
    if (pool.waiters.remove(slotId)) return CANCELLED;
    const slot = pool.holders.get(slotId);
    return slot ? { type: "granted", slot } : UNKNOWN;
  }

  renew(name: string, slotId: string): StoreRenewResult {
    const pool = this.pools.get(name);
    const slot = pool?.holders.get(slotId);
    if (!pool || !slot) return NOT_FOUND;
    const now = this.clock.now();
    if (slot.leaseDeadline <= now) {
      this.reclaimOne(pool, slot, now);
      return NOT_FOUND;
    }
    if (slot.leaseDeadline >= slot.requestDeadline) {
      return { type: "capped", requestDeadline: slot.requestDeadline };
    }
    const leaseDeadline = Math.min(now + pool.config.termMs, slot.requestDeadline);
    // Handed-out slot objects stay immutable: renew replaces the record.
    pool.holders.set(slotId, { ...slot, leaseDeadline });
    return { type: "renewed", leaseDeadline };
  }

  release(name: string, slotId: string): StoreReleaseResult {
    const pool = this.pools.get(name);
    // Taken out at once (one lookup); a lease that ran out still counts as reclaimed below.
    const slot = pool?.holders.remove(slotId);
    if (!pool || !slot) return NOT_RELEASED;
    const now = this.clock.now();
    if (slot.leaseDeadline <= now) {
      // The lease ran out before the release arrived: it counts as reclaimed.
      this.reclaimOne(pool, slot, now);
      return NOT_RELEASED;
    }
    // Figures before the handoff, the released slot counted: how busy the pool was.
    const held = pool.holders.size + 1;
    const queued = pool.waiters.size;
    this.serveAround(pool, now);
    return { released: true, slot, releasedAt: now, held, queued, shared: pool.shared };
  }

  inspect(name: string, slotId: string): StoreInspectResult | null {
    const pool = this.pools.get(name);
    const slot = pool?.holders.get(slotId);
    if (!pool || !slot || slot.leaseDeadline <= this.clock.now()) return null;
    return { slot, held: pool.holders.size, queued: pool.waiters.size, shared: pool.shared };
  }

  setLearned(name: string, learned: LearnedLimits): void {
    const pool = this.pools.get(name);
    if (!pool) throw new PoolNotFoundError(name);
    pool.learned = { ...learned };
    pool.shared = { version: pool.shared.version + 1, learned: pool.learned };
    refreshLimits(pool);
    this.serveAround(pool, this.clock.now());
  }

  snapshot(name: string): PoolSnapshot | null {
    const pool = this.pools.get(name);
    if (!pool) return null;
    return {
      ...this.figures(pool),
      learned: { ...pool.learned },
      slotIds: pool.holders.ids(),
      waiterIds: pool.waiters.ids(),
    };
  }

  close(): void {
    if (this.leaseTimer !== null) this.clock.clearTimeout(this.leaseTimer);
    this.leaseTimer = null;
    this.leaseTimerAt = Number.POSITIVE_INFINITY;
    for (const pool of this.pools.values()) this.clearGateTimer(pool);
  }

  private figures(pool: PoolState): PoolFigures {
    return { held: pool.holders.size, queued: pool.waiters.size, limit: pool.limit };
  }

  private rejected(
    pool: PoolState,
    reason: "concurrency" | "queue_full" | "rpm" | "paused" | "budget",
    retryAfterMs: number | null,
  ): StoreAcquireResult {
    return { type: "rejected", reason, retryAfterMs, figures: this.figures(pool) };
  }

  private enqueue(pool: PoolState, request: StoreAcquireRequest, now: number): StoreAcquireResult {
    pool.waiters.push(request.slotId, now, request.waitMs, request.waiter);
    return { type: "queued", figures: this.figures(pool) };
  }

  private grant(pool: PoolState, slotId: string, now: number): HeldSlot {
    const { termMs, requestTimeoutMs } = pool.config;
    const requestDeadline = now + requestTimeoutMs;
    const slot: HeldSlot = {
      slotId,
      acquiredAt: now,
      leaseDeadline: Math.min(now + termMs, requestDeadline),
      requestDeadline,
      heldAtGrant: pool.holders.size + 1,
      budgetRoom: undefined,
    };
    pool.holders.set(slotId, slot);
    slot.budgetRoom = budgetRoom(pool) ?? undefined;
    pool.grantLog.record(now);
    this.armLeaseTimer(slot.leaseDeadline, now);
    return slot;
  }

  private obstacle(pool: PoolState, now: number): Obstacle | null {
    if (pool.holders.size >= pool.limit) return "concurrency";
    if (!budgetAdmits(pool)) return "budget";
    if (now < pool.learned.pausedUntil) return "paused";
    const rpm = pool.rpm;
    if (rpm !== null && pool.grantLog.waitMs(now, rpm) > 0) return "rpm";
    return null;
  }

  private gateOpensIn(pool: PoolState, now: number): number {
    const pausedFor = Math.max(0, pool.learned.pausedUntil - now);
    const rpm = pool.rpm;
    const rpmWait = rpm === null ? 0 : pool.grantLog.waitMs(now, rpm);
    return Math.max(pausedFor, rpmWait);
  }

  /** Serves the pool's queue head-first; see "Serving waiters" in SEMANTICS.md. */
  private serve(pool: PoolState, now: number): void {
    const waiters = pool.waiters;
    for (;;) {
      if (!waiters.peek()) {
        this.clearGateTimer(pool);
        return;
      }
      if (waiters.headDeadline < now) {
        waiters.shift();
        continue;
      }
      const obstacle = this.obstacle(pool, now);
      if (obstacle !== null) {
        if (isTimeGate(obstacle)) this.armGateTimer(pool, now + this.gateOpensIn(pool, now));
        return;
      }
      const slotId = waiters.headSlotId;
      const queuedMs = now - waiters.headEnqueuedAt;
      const token = waiters.headToken;
      waiters.shift();
      const slot = this.grant(pool, slotId, now);
      this.listener.granted(pool.name, slot, queuedMs, token);
    }
  }

  /** Serves the pool, then the other pools of its budget (a freed budget share may fit them). */
  private serveAround(pool: PoolState, now: number): void {
    this.serve(pool, now);
    const budget = pool.budget;
    if (!budget) return;
    for (const member of budget.members) if (member !== pool) this.serve(member, now);
  }

  private serveMembers(budget: BudgetState, now: number): void {
    for (const member of budget.members) this.serve(member, now);
  }

  private reclaimOne(pool: PoolState, slot: HeldSlot, now: number): void {
    pool.holders.delete(slot.slotId);
    this.listener.reclaimed(pool.name, [slot.slotId]);
    this.serveAround(pool, now);
  }

  private armLeaseTimer(deadline: number, now: number): void {
    if (deadline >= this.leaseTimerAt) return;
    if (this.leaseTimer !== null) this.clock.clearTimeout(this.leaseTimer);
    this.leaseTimerAt = deadline;
    this.leaseTimer = this.clock.setTimeout(() => this.onLeaseTimer(), deadline - now);
  }

  /** Reclaims every expired lease, serves the affected pools, and re-arms for the next deadline. */
  private onLeaseTimer(): void {
    this.leaseTimer = null;
    this.leaseTimerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    let nextDeadline = Number.POSITIVE_INFINITY;
    for (const pool of this.pools.values()) {
      let expired: string[] | undefined;
      for (const slot of pool.holders.values()) {
        if (slot.leaseDeadline > now) continue;
        expired ??= [];
        expired.push(slot.slotId);
      }
      if (expired) {
        for (const slotId of expired) pool.holders.delete(slotId);
        this.listener.reclaimed(pool.name, expired);
        this.serveAround(pool, now);
      }
    }
    for (const pool of this.pools.values()) {
      for (const slot of pool.holders.values()) {
        if (slot.leaseDeadline < nextDeadline) nextDeadline = slot.leaseDeadline;
      }
    }
    if (nextDeadline !== Number.POSITIVE_INFINITY) this.armLeaseTimer(nextDeadline, now);
  }

  private armGateTimer(pool: PoolState, at: number): void {
    if (pool.gateTimer !== null && pool.gateTimerAt <= at) return;
    this.clearGateTimer(pool);
    pool.gateTimerAt = at;
    pool.gateTimer = this.clock.setTimeout(() => {
      pool.gateTimer = null;
      pool.gateTimerAt = Number.POSITIVE_INFINITY;
      this.serve(pool, this.clock.now());
    }, at - this.clock.now());
  }

  private clearGateTimer(pool: PoolState): void {
    if (pool.gateTimer === null) return;
    this.clock.clearTimeout(pool.gateTimer);
    pool.gateTimer = null;
    pool.gateTimerAt = Number.POSITIVE_INFINITY;
  }

  private budgetState(name: string): BudgetState {
    let budget = this.budgets.get(name);
    if (!budget) {
      budget = { name, origin: null, members: new Set() };
      this.budgets.set(name, budget);
    }
    return budget;
  }

  private joinBudget(pool: PoolState, budgetName: string | null): void {
    if (pool.budget?.name === budgetName) return;
    if (pool.budget) {
      const previous = pool.budget;
      previous.members.delete(pool);
      pool.budget = null;
      this.serveMembers(previous, this.clock.now());
    }
    if (budgetName !== null) {
      pool.budget = this.budgetState(budgetName);
      pool.budget.members.add(pool);
    }
  }
}
