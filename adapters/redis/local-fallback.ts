import type { Clock } from "../../src/clock/clock.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";
import type {
  LearnedLimits,
  PoolSnapshot,
  StoreAcquireRequest,
  StoreAcquireResult,
  StoreCancelResult,
  StoreInspectResult,
  StoreListener,
  StorePoolConfig,
  StoreReleaseResult,
  StoreRenewResult,
} from "../../src/store/types.js";
import type { RejoiningWaiter } from "./queued-waiters.js";

const ALL = () => true;

/** What the local store issued for one slot id: a held slot, or a waiter. */
interface Issued {
  pool: string;
  /** Held: its request deadline (local clock). Null while it waits. */
  requestDeadline: number | null;
  /** Waiting: when it queued (local clock) and the wait it asked for. */
  queuedAt: number;
  waitMs: number;
}

/** A slot the local store granted, handed over to Redis once it is back. */
export interface HandedHolder {
  pool: string;
  slotId: string;
  requestLeftMs: number;
}

/**
 * The per-process store used while Redis is unreachable under failure policy "open": a
 * {@link MemorySlotStore} holding the same pools and budgets, plus what it issued (slots and
 * waiters), so those are released, renewed and cancelled here until they are handed over to
 * Redis when it is back ({@link LocalFallback.handOver}).
 *
 * @example
 * ```ts
 * const fallback = new LocalFallback(clock, () => listener);
 * const result = fallback.acquire("llm", { slotId, waitMs: 0 });
 * if (fallback.owns(slotId)) fallback.release("llm", slotId);
 * ```
 */
export class LocalFallback {
  /** Operations answered locally (acquires, releases, renewals, cancels). */
  operations = 0;
  private readonly store: MemorySlotStore;
  private readonly issued = new Map<string, Issued>();
  /**
   * This process's Redis slots while Redis is away, slot id → pool: each takes a local slot,
   * so the local limit counts the work still running on them (see {@link reserve}).
   */
  private readonly reserved = new Map<string, string>();
  /** Redis waiters moved into the local queue (slot ids), until Redis is back. */
  private readonly movedWaiters = new Set<string>();

  /**
   * `movedDone`: a waiter moved here from Redis is finished with (released, cancelled, its
   * lease ran out): Redis may still queue it, so the store cancels it there once Redis is back.
   */
  constructor(
    private readonly clock: Clock,
    private readonly listener: () => StoreListener,
    private readonly movedDone: (pool: string, slotId: string) => void = () => {},
  ) {
    this.store = new MemorySlotStore({ clock });
    this.store.setListener({
      granted: (pool, slot, queuedMs) => {
        const issued = this.issued.get(slot.slotId);
        if (!issued) return listener().granted(pool, slot, queuedMs);
        issued.requestDeadline = slot.requestDeadline;
        // A waiter moved from Redis waited there first.
        const moved = this.movedWaiters.has(slot.slotId);
        const waitedMs = moved ? this.clock.now() - issued.queuedAt : queuedMs;
        listener().granted(pool, slot, waitedMs);
      },
      reclaimed: (pool, slotIds) => {
        // A reserved place whose caller stopped renewing is freed here; Redis decides its slot.
        const issuedIds = slotIds.filter((slotId) => !this.reserved.delete(slotId));
        for (const slotId of issuedIds) this.finish(slotId);
        if (issuedIds.length > 0) listener().reclaimed(pool, issuedIds);
      },
    });
  }

  /**
   * Takes a local slot for each slot this process holds in Redis as Redis goes away: their
   * callers still work, so the per-process limit must count them, or the process would admit
   * a whole limit on top of them. The reservation ends with the slot's release (or its lease
   * here, renewed with the Redis slot), or when Redis is back ({@link handOver}). A pool that
   * is paused or at its RPM gate at that moment reserves nothing (a gap: once the gate opens,
   * it admits on top of those slots); a reservation counts in the local RPM window too.
   */
  reserve(slots: readonly { pool: string; slotId: string }[]): void {
    for (const { pool, slotId } of slots) {
      if (this.issued.has(slotId) || this.reserved.has(slotId)) continue;
      if (!this.store.snapshot(pool)) continue;
      const result = this.store.acquire(pool, { slotId, waitMs: 0 });
      if (result.type === "granted") this.reserved.set(slotId, pool);
    }
  }

  /**
   * Moves this process's waiters queued in Redis as Redis goes away into the local queue
   * (the longest waiting first, ahead of anyone who comes later), so they are served by the
   * local limit instead of waiting out their whole wait for a handoff Redis cannot send. A
   * waiter the local store cannot queue (pool unknown here, queue full) stays with Redis.
   * Answers the slot ids moved; their grants reach the listener like any local grant.
   */
  takeWaiters(waiters: readonly RejoiningWaiter[]): string[] {
    const moved: string[] = [];
    const now = this.clock.now();
    for (const { pool, slotId, waitedMs, waitLeftMs } of waiters) {
      if (waitLeftMs <= 0 || this.issued.has(slotId) || !this.store.snapshot(pool)) continue;
      const result = this.store.acquire(pool, { slotId, waitMs: waitLeftMs });
      if (result.type === "rejected") continue;
      this.operations++;
      moved.push(slotId);
      this.issue(pool, slotId, result, now - waitedMs, waitedMs + waitLeftMs, true);
      if (result.type === "granted") this.listener().granted(pool, result.slot, waitedMs);
    }
    return moved;
  }

  /**
   * Whether this slot id is a Redis waiter moved here (see {@link takeWaiters}) and Redis is
   * not back yet. Redis's events about it (a grant on its way as Redis went, a reclaim) are
   * then not this process's to act on: the recovery decides, with a cancel in Redis first.
   */
  moved(slotId: string): boolean {
    return this.movedWaiters.has(slotId);
  }

  /**
   * Redis waiters moved here whose callers hold a local slot now (Redis may still queue them),
   * of the pools `inScope` accepts (those of the shard that is back).
   */
  movedHolders(inScope: (pool: string) => boolean = ALL): { pool: string; slotId: string }[] {
    const holders: { pool: string; slotId: string }[] = [];
    for (const [slotId, issued] of this.issued) {
      if (!inScope(issued.pool)) continue;
      if (issued.requestDeadline !== null && this.movedWaiters.has(slotId)) {
        holders.push({ pool: issued.pool, slotId });
      }
    }
    return holders;
  }

  /** The caller of a reserved Redis slot released it: its local place is free. */
  releaseReserved(slotId: string): void {
    const pool = this.reserved.get(slotId);
    if (pool === undefined) return;
    this.reserved.delete(slotId);
    this.store.release(pool, slotId);
  }

  /** The caller of a reserved Redis slot renewed it: its local place lives on too. */
  renewReserved(slotId: string): void {
    const pool = this.reserved.get(slotId);
    if (pool !== undefined) this.store.renew(pool, slotId);
  }

  /**
   * Gives up every slot and waiter the local store still answers for, and answers them, so
   * that Redis takes them over (adopts the slots, queues the waiters): slots taken during the
   * outage then count against the shared limit instead of coming on top of it. Waiters go
   * first (cancelled here), so releasing the slots here serves none of them. Only the pools
   * `inScope` accepts (a shard of a cluster back while others are still down).
   */
  handOver(inScope: (pool: string) => boolean = ALL): {
    holders: HandedHolder[];
    waiters: RejoiningWaiter[];
  } {
    const now = this.clock.now();
    const holders: HandedHolder[] = [];
    const waiters: RejoiningWaiter[] = [];
    const issuedInScope = [...this.issued].filter(([, issued]) => inScope(issued.pool));
    for (const [slotId, issued] of issuedInScope) {
      if (issued.requestDeadline !== null) continue;
      this.store.cancel(issued.pool, slotId);
      const waitedMs = Math.max(0, now - issued.queuedAt);
      const waitLeftMs = Math.max(0, issued.waitMs - waitedMs);
      waiters.push({ pool: issued.pool, slotId, waitedMs, waitLeftMs });
    }
    // Redis has the reserved slots itself (or adopts them from the ledger).
    for (const [slotId, pool] of this.reserved) {
      if (!inScope(pool)) continue;
      this.store.release(pool, slotId);
      this.reserved.delete(slotId);
    }
    for (const [slotId, issued] of issuedInScope) {
      this.issued.delete(slotId);
      this.movedWaiters.delete(slotId);
      if (issued.requestDeadline === null) continue;
      this.store.release(issued.pool, slotId);
      const requestLeftMs = Math.max(1, issued.requestDeadline - now);
      holders.push({ pool: issued.pool, slotId, requestLeftMs });
    }
    return { holders, waiters };
  }

  /** True when this slot id was granted or queued locally and is not finished yet. */
  owns(slotId: string): boolean {
    return this.issued.has(slotId);
  }

  /** Slots and waiters the local store still answers for, reserved places included. */
  get outstanding(): number {
    return this.issued.size + this.reserved.size;
  }

  upsertBudget(budget: string, originMaxConcurrent: number | null): void {
    this.store.upsertBudget(budget, originMaxConcurrent);
  }

  removeBudget(budget: string): void {
    this.store.removeBudget(budget);
  }

  upsertPool(pool: string, config: StorePoolConfig): void {
    this.store.upsertPool(pool, config);
  }

  removePool(pool: string): void {
    this.store.removePool(pool);
  }

  setLearned(pool: string, learned: LearnedLimits): void {
    if (this.store.snapshot(pool)) this.store.setLearned(pool, learned);
  }

  /**
   * `sentToRedis`: the same acquire went to Redis first and timed out, so Redis may still
   * run it; the slot id is then handled as a moved waiter (see {@link moved}), and one refused
   * here is cancelled in Redis once it is back.
   */
  acquire(pool: string, request: StoreAcquireRequest, sentToRedis = false): StoreAcquireResult {
    this.operations++;
    const { slotId } = request;
    const result = this.store.acquire(pool, request);
    if (result.type === "rejected") {
      if (sentToRedis) this.movedDone(pool, slotId);
      return result;
    }
    this.issue(pool, slotId, result, this.clock.now(), request.waitMs, sentToRedis);
    return result;
  }

  /** Records a slot granted or a waiter queued here; `fromRedis`: Redis may know it too. */
  private issue(
    pool: string,
    slotId: string,
    result: Exclude<StoreAcquireResult, { type: "rejected" }>,
    queuedAt: number,
    waitMs: number,
    fromRedis: boolean,
  ): void {
    const requestDeadline = result.type === "granted" ? result.slot.requestDeadline : null;
    this.issued.set(slotId, { pool, requestDeadline, queuedAt, waitMs });
    if (fromRedis) this.movedWaiters.add(slotId);
  }

  release(pool: string, slotId: string): StoreReleaseResult {
    this.operations++;
    this.finish(slotId);
    return this.store.release(pool, slotId);
  }

  inspect(pool: string, slotId: string): StoreInspectResult | null {
    return this.store.inspect(pool, slotId);
  }

  renew(pool: string, slotId: string): StoreRenewResult {
    this.operations++;
    const result = this.store.renew(pool, slotId);
    if (result.type === "not_found") this.finish(slotId);
    return result;
  }

  cancel(pool: string, slotId: string): StoreCancelResult {
    this.operations++;
    const result = this.store.cancel(pool, slotId);
    if (result.type !== "granted") this.finish(slotId);
    return result;
  }

  /** The local store no longer answers for this slot id. */
  private finish(slotId: string): void {
    const issued = this.issued.get(slotId);
    if (!issued) return;
    this.issued.delete(slotId);
    // Still "moved" until Redis is back: Redis's own grant for it must not reach the governor.
    if (this.movedWaiters.has(slotId)) this.movedDone(issued.pool, slotId);
  }

  snapshot(pool: string): PoolSnapshot | null {
    return this.store.snapshot(pool);
  }

  close(): void {
    this.store.close();
  }
}
