import type { Clock } from "../../src/clock/clock.js";
import type {
  StoreAcquireResult,
  StoreCancelResult,
  StoreListener,
  StoreRenewResult,
} from "../../src/store/types.js";
import { HeldSlots } from "./held-slots.js";
import { QueuedWaiters } from "./queued-waiters.js";
import type { RedisListener } from "./replies.js";

/**
 * What this process has in Redis: its waiters (`queued`) and the slots its callers hold
 * (`held`), kept in step with Redis's answers and events. Recovery after an outage puts them
 * back (`recovery.ts`): a Redis that restarted without persistence has forgotten them, and a
 * process whose event subscription blipped had its waiters dropped.
 *
 * @example
 * ```ts
 * const ledger = new ProcessLedger(clock);
 * const engine = new RedisEngine({ ...deps, listener: () => ledgerListener });
 * const ledgerListener = ledger.listener(() => governorListener);
 * ledger.acquired("llm", slotId, waitMs, await engine.acquire("llm", request));
 * ```
 */
export class ProcessLedger {
  readonly queued: QueuedWaiters;
  readonly held = new HeldSlots();
  /** Slots released while Redis could not be reached, by id: their pools. */
  private readonly unreleased = new Map<string, string>();
  /** Waiters given up on while Redis could not be reached, by id: their pools. */
  private readonly uncancelled = new Map<string, string>();

  constructor(clock: Clock) {
    this.queued = new QueuedWaiters(clock);
  }

  /** An acquire's answer: a slot held, or a waiter queued. */
  acquired(pool: string, slotId: string, waitMs: number, result: StoreAcquireResult): void {
    if (result.type === "granted") this.held.add(pool, result.slot);
    // A handoff event may overtake the "queued" answer (another connection): held already.
    else if (result.type === "queued" && !this.held.has(slotId)) {
      this.queued.add(pool, slotId, waitMs);
    }
  }

  /** A cancel's answer: a waiter handed its slot before the cancel arrived holds it now. */
  cancelled(pool: string, result: StoreCancelResult): void {
    if (result.type === "granted") this.held.add(pool, result.slot);
  }

  /** A renewal's answer: the lease Redis gave, or a slot Redis no longer holds. */
  renewed(slotId: string, result: StoreRenewResult): void {
    if (result.type === "renewed") this.held.renewed(slotId, result.leaseDeadline);
    else if (result.type === "not_found") this.held.delete(slotId);
  }

  /** The caller is done with the slot or the wait, whatever Redis answers. */
  done(slotId: string): void {
    this.queued.delete(slotId);
    this.held.delete(slotId);
  }

  /** A release Redis did not get (unreachable): sent again once it is back. */
  releaseLater(pool: string, slotId: string): void {
    this.unreleased.set(slotId, pool);
  }

  /** A cancel Redis did not get: sent again once it is back (a slot it was handed goes back). */
  cancelLater(pool: string, slotId: string): void {
    this.uncancelled.set(slotId, pool);
  }

  /**
   * The releases and cancels to send again, of the pools `inScope` accepts (a shard that is
   * back), forgotten here (a failed one is recorded anew).
   */
  takeUnsent(inScope: (pool: string) => boolean = () => true): {
    releases: [slotId: string, pool: string][];
    cancels: [string, string][];
  } {
    const take = (unsent: Map<string, string>) => {
      const taken = [...unsent].filter(([, pool]) => inScope(pool));
      for (const [slotId] of taken) unsent.delete(slotId);
      return taken;
    };
    return { releases: take(this.unreleased), cancels: take(this.uncancelled) };
  }

  forgetPool(pool: string): void {
    this.queued.forgetPool(pool);
    this.held.forgetPool(pool);
    for (const unsent of [this.unreleased, this.uncancelled]) {
      for (const [slotId, ofPool] of unsent) {
        if (ofPool === pool) unsent.delete(slotId);
      }
    }
  }

  clear(): void {
    this.queued.clear();
    this.held.clear();
    this.unreleased.clear();
    this.uncancelled.clear();
  }

  /**
   * The listener the engine reports to: keeps the ledger in step (a waiter handed its slot
   * holds it from then on, a reclaimed slot is gone, a pool removed elsewhere leaves
   * nothing), then tells `inner()` (the governor). A slot renewed or released through
   * another process only updates the ledger: the lease to adopt it with, or nothing to adopt.
   */
  listener(inner: () => StoreListener): RedisListener {
    return {
      renewedElsewhere: (_pool, slotId, leaseDeadline) => this.held.renewed(slotId, leaseDeadline),
      releasedElsewhere: (_pool, slotId) => this.held.delete(slotId),
      granted: (pool, slot, queuedMs, waiter) => {
        this.queued.delete(slot.slotId);
        this.held.add(pool, slot);
        inner().granted(pool, slot, queuedMs, waiter);
      },
      reclaimed: (pool, slotIds) => {
        for (const slotId of slotIds) this.held.delete(slotId);
        inner().reclaimed(pool, slotIds);
      },
      removed: (pool) => {
        this.forgetPool(pool);
        inner().removed?.(pool);
      },
    };
  }
}
