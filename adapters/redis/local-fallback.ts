import type { Clock } from "../../src/clock/clock.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";
import type {
  LearnedLimits,
  PoolSnapshot,
  StoreAcquireRequest,
  StoreAcquireResult,
  StoreCancelResult,
  StoreListener,
  StorePoolConfig,
  StoreReleaseResult,
  StoreRenewResult,
} from "../../src/store/types.js";

/**
 * The per-process store used while Redis is unreachable under failure policy "open": a
 * {@link MemorySlotStore} holding the same pools and budgets, plus the ids of the slots and
 * waiters it issued, so those are released, renewed and cancelled here even after Redis is
 * back (Redis never heard of them).
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
  private readonly issued = new Set<string>();

  constructor(clock: Clock, listener: () => StoreListener) {
    this.store = new MemorySlotStore({ clock });
    this.store.setListener({
      granted: (pool, slot, queuedMs) => listener().granted(pool, slot, queuedMs),
      reclaimed: (pool, slotIds) => {
        for (const slotId of slotIds) this.issued.delete(slotId);
        listener().reclaimed(pool, slotIds);
      },
    });
  }

  /** True when this slot id was granted or queued locally and is not finished yet. */
  owns(slotId: string): boolean {
    return this.issued.has(slotId);
  }

  /** Slots and waiters the local store still answers for. */
  get outstanding(): number {
    return this.issued.size;
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
    if (result.type !== "rejected") this.issued.add(request.slotId);
    return result;
  }

  release(pool: string, slotId: string): StoreReleaseResult {
    this.operations++;
    this.issued.delete(slotId);
    return this.store.release(pool, slotId);
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
