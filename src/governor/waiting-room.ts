import { LRUCache } from "lru-cache";
import type { Clock } from "../clock/clock.js";
import { AbortedError, QueueTimeoutError } from "../errors.js";
import type { HeldSlot, SlotStore, StoreCancelResult } from "../store/types.js";
import type { Caller } from "./caller.js";
import { DeadlineTimer } from "./deadline-timer.js";
import type { PoolEntry } from "./pool-registry.js";
import type { SlotGrant } from "./types.js";

/** How a granted slot becomes a caller's grant (owned by the governor). */
export type GrantMaker = (entry: PoolEntry, slot: HeldSlot, queuedMs: number) => SlotGrant;

/**
 * The callers of this process that wait in a store's queue. The store hands slots over
 * (`granted`); the room resolves the matching promise. Wait budgets share one timer, an
 * abort leaves the queue at once, and a timeout or abort that races a handoff asks the store,
 * whose answer wins: no slot is ever granted twice or lost.
 *
 * @example
 * ```ts
 * room.wait(caller); // the caller's promise settles on a handoff, its timeout or its abort
 * ```
 */
export class WaitingRoom {
  private readonly waiters = new Map<string, Caller>();
  private readonly timeouts: DeadlineTimer<Caller>;
  /** Handoffs that arrived before their acquire answered "queued" (async stores only). */
  private earlyGrants: LRUCache<string, { slot: HeldSlot; queuedMs: number }> | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly store: SlotStore,
    private readonly makeGrant: GrantMaker,
  ) {
    this.timeouts = new DeadlineTimer(
      clock,
      (waiter) => this.withdraw(waiter, "timeout"),
      (waiter) => !waiter.settled && !waiter.withdrawing,
    );
  }

  get size(): number {
    return this.waiters.size;
  }

  /** Queues a caller the store answered "queued" (its entry, slotId, waitMs and enqueuedAt set). */
  wait(waiter: Caller): void {
    const early = this.earlyGrants?.get(waiter.slotId);
    if (early) {
      this.earlyGrants!.delete(waiter.slotId);
      this.settleGranted(waiter, early.slot, early.queuedMs);
      return;
    }
    this.waiters.set(waiter.slotId, waiter);
    this.timeouts.add(waiter.enqueuedAt + waiter.waitMs, waiter);
    const signal = waiter.signal;
    if (signal) {
      waiter.onAbort = () => this.withdraw(waiter, "abort");
      if (signal.aborted) waiter.onAbort();
      else signal.addEventListener("abort", waiter.onAbort, { once: true });
    }
  }

  /** The store handed a slot to one of our waiters (or another process's: then it is kept briefly). */
  granted(slot: HeldSlot, queuedMs: number): void {
    const waiter = this.waiters.get(slot.slotId);
    if (!waiter) {
      this.earlyGrants ??= new LRUCache({ max: 10_000, ttl: 60_000 });
      this.earlyGrants.set(slot.slotId, { slot, queuedMs });
      return;
    }
    if (waiter.withdrawing) return;
    this.settleGranted(waiter, slot, queuedMs);
  }

  /** Rejects every waiter of one pool (or all when `entry` is undefined) without asking the store. */
  rejectAll(error: () => unknown, entry?: PoolEntry): void {
    for (const waiter of [...this.waiters.values()]) {
      if (entry && waiter.entry !== entry) continue;
      this.settle(waiter);
      waiter.failed(error());
    }
    if (!entry) this.timeouts.clear();
  }

  private settleGranted(waiter: Caller, slot: HeldSlot, queuedMs: number): void {
    this.settle(waiter);
    const entry = waiter.entry!;
    // enqueuedAt + queuedMs is the time of the handoff: no clock read needed.
    entry.meter.admitted(waiter.enqueuedAt + queuedMs, queuedMs);
    waiter.granted(this.makeGrant(entry, slot, queuedMs));
  }

  private settle(waiter: Caller): void {
    waiter.settled = true;
    this.waiters.delete(waiter.slotId);
    if (waiter.onAbort) waiter.signal?.removeEventListener("abort", waiter.onAbort);
    // Waiters mostly leave in deadline order: dropping settled ones from the top keeps the
    // timeout heap from holding every served caller until its deadline.
    this.timeouts.dropSettledTop();
  }

  private withdraw(waiter: Caller, why: "timeout" | "abort"): void {
    if (waiter.settled || waiter.withdrawing) return;
    waiter.withdrawing = true;
    let answer: StoreCancelResult | Promise<StoreCancelResult>;
    try {
      answer = this.store.cancel(waiter.entry!.name, waiter.slotId);
    } catch (error) {
      this.settle(waiter);
      waiter.failed(error);
      return;
    }
    if (answer instanceof Promise) {
      answer.then(
        (result) => this.afterWithdraw(waiter, why, result),
        (error: unknown) => {
          this.settle(waiter);
          waiter.failed(error);
        },
      );
    } else {
      this.afterWithdraw(waiter, why, answer);
    }
  }

  private afterWithdraw(waiter: Caller, why: "timeout" | "abort", result: StoreCancelResult): void {
    if (waiter.settled) return;
    const now = this.clock.now();
    if (result.type === "granted") {
      if (why === "timeout") {
        // The handoff won the race by a hair: the caller still gets its slot.
        this.settleGranted(waiter, result.slot, now - waiter.enqueuedAt);
        return;
      }
      // The caller is gone: give the slot straight back.
      void Promise.resolve(this.store.release(waiter.entry!.name, waiter.slotId)).catch(() => {});
    }
    this.settle(waiter);
    if (why === "timeout") {
      waiter.entry!.meter.timedOut(now);
      waiter.failed(new QueueTimeoutError(waiter.waitMs));
    } else {
      waiter.failed(new AbortedError(waiter.signal?.reason));
    }
  }
}
