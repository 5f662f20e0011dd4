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

  constructor(
    private readonly clock: Clock,
    listener: () => StoreListener,
  ) {
    this.store = new MemorySlotStore({ clock });
    this.store.setListener({
      granted: (pool, slot, queuedMs) => {
        const issued = this.issued.get(slot.slotId);
        if (issued) issued.requestDeadline = slot.requestDeadline;
        listener().granted(pool, slot, queuedMs);
      },
      reclaimed: (pool, slotIds) => {
        // A reserved place whose caller stopped renewing is freed here; Redis decides its slot.
        const issuedIds = slotIds.filter((slotId) => !this.reserved.delete(slotId));
        for (const slotId of issuedIds) this.issued.delete(slotId);
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
   * first (cancelled here), so releasing the slots here serves none of them.
   */
  handOver(): { holders: HandedHolder[]; waiters: RejoiningWaiter[] } {
    const now = this.clock.now();
    const holders: HandedHolder[] = [];
    const waiters: RejoiningWaiter[] = [];
    for (const [slotId, issued] of this.issued) {
      if (issued.requestDeadline !== null) continue;
      this.store.cancel(issued.pool, slotId);
      const waitedMs = Math.max(0, now - issued.queuedAt);
      const waitLeftMs = Math.max(0, issued.waitMs - waitedMs);
      waiters.push({ pool: issued.pool, slotId, waitedMs, waitLeftMs });
    }
    // Redis has the reserved slots itself (or adopts them from the ledger).
    for (const [slotId, pool] of this.reserved) this.store.release(pool, slotId);
    this.reserved.clear();
    for (const [slotId, issued] of this.issued) {
      if (issued.requestDeadline === null) continue;
      this.store.release(issued.pool, slotId);
      const requestLeftMs = Math.max(1, issued.requestDeadline - now);
      holders.push({ pool: issued.pool, slotId, requestLeftMs });
    }
    this.issued.clear();
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

  acquire(pool: string, request: StoreAcquireRequest): StoreAcquireResult {
    this.operations++;
    const result = this.store.acquire(pool, request);
    if (result.type === "granted") {
      this.issued.set(request.slotId, {
        pool,
        requestDeadline: result.slot.requestDeadline,
        queuedAt: 0,
        waitMs: 0,
      });
    } else if (result.type === "queued") {
      this.issued.set(request.slotId, {
        pool,
        requestDeadline: null,
        queuedAt: this.clock.now(),
        waitMs: request.waitMs,
      });
    }
    return result;
  }

  release(pool: string, slotId: string): StoreReleaseResult {
    this.operations++;
    this.issued.delete(slotId);
    return this.store.release(pool, slotId);
  }

  inspect(pool: string, slotId: string): StoreInspectResult | null {
    return this.store.inspect(pool, slotId);
  }

  renew(pool: string, slotId: string): StoreRenewResult {
    this.operations++;
    const result = this.store.renew(pool, slotId);
    if (result.type === "not_found") this.issued.delete(slotId);
    return result;
  }

  cancel(pool: string, slotId: string): StoreCancelResult {
    this.operations++;
    const result = this.store.cancel(pool, slotId);
    if (result.type !== "granted") this.issued.delete(slotId);
    return result;
  }

  snapshot(pool: string): PoolSnapshot | null {
    return this.store.snapshot(pool);
  }

  close(): void {
    this.store.close();
  }
}
