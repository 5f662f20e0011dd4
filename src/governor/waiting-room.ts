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
    if (waiter.withdrawing) {
      // The cancel in flight will answer "granted" and decide; keep the store's exact wait for it.
      waiter.handoffQueuedMs = queuedMs;
      return;
    }
    this.settleGranted(waiter, slot, queuedMs);
  }

  /** Rejects every waiter of one pool (or all when `entry` is undefined) without asking the store. */
  rejectAll(error: () => unknown, entry?: PoolEntry): void {
    for (const waiter of [...this.waiters.values()]) {
      if (waiter.settled || (entry && waiter.entry !== entry)) continue;
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

  /**
   * The caller's promise is settled. A waiter whose cancel is in flight stays in the room
   * until the answer, so a handoff that raced it is recognised and given back.
   */
  private settle(waiter: Caller): void {
    waiter.settled = true;
    if (!waiter.withdrawing) this.waiters.delete(waiter.slotId);
    if (waiter.onAbort) waiter.signal?.removeEventListener("abort", waiter.onAbort);
    // Waiters mostly leave in deadline order: dropping settled ones from the top keeps the
    // timeout heap from holding every served caller until its deadline.
    this.timeouts.dropSettledTop();
  }

  /**
   * Takes a waiter out of the store's queue. An abort ends the wait at once, even while a
   * timeout's cancel is in flight; a timeout waits for the store's answer, since a handoff
   * may have won the race.
   */
  private withdraw(waiter: Caller, why: "timeout" | "abort"): void {
    if (waiter.settled) return;
    const cancelInFlight = waiter.withdrawing;
    waiter.withdrawing = true;
    if (why === "abort") this.settleAborted(waiter);
    if (cancelInFlight) return;
    let answer: StoreCancelResult | Promise<StoreCancelResult>;
    try {
      answer = this.store.cancel(waiter.entry!.name, waiter.slotId);
    } catch (error) {
      this.cancelFailed(waiter, error);
      return;
    }
    if (answer instanceof Promise) {
      answer.then(
        (result) => this.afterWithdraw(waiter, result),
        (error: unknown) => this.cancelFailed(waiter, error),
      );
    } else {
      this.afterWithdraw(waiter, answer);
    }
  }

  private afterWithdraw(waiter: Caller, result: StoreCancelResult): void {
    waiter.withdrawing = false;
    this.waiters.delete(waiter.slotId);
    if (!waiter.settled && waiter.signal?.aborted) this.settleAborted(waiter);
    if (result.type === "granted") {
      if (!waiter.settled) {
        // A timeout lost to a handoff by a hair: the caller keeps its slot. The wait ends at
        // the handoff, not at this answer; the store's clock may differ from ours, hence ≥ 0.
        const queuedMs =
          waiter.handoffQueuedMs >= 0
            ? waiter.handoffQueuedMs
            : Math.max(0, result.slot.acquiredAt - waiter.enqueuedAt);
        this.settleGranted(waiter, result.slot, queuedMs);
        return;
      }
      // Nobody takes this slot (the caller aborted, or its pool went): it goes straight back,
      // and the store hands it to the next waiter in the same operation.
      this.giveBack(waiter);
      return;
    }
    if (waiter.settled) return;
    this.settle(waiter);
    const deadline = waiter.enqueuedAt + waiter.waitMs;
    waiter.entry!.meter.timedOut(deadline);
    waiter.failed(new QueueTimeoutError(waiter.waitMs));
  }

  private settleAborted(waiter: Caller): void {
    this.settle(waiter);
    waiter.failed(new AbortedError(waiter.signal?.reason));
  }

  /** The store could not answer: a slot handed over meanwhile is freed by its lease. */
  private cancelFailed(waiter: Caller, error: unknown): void {
    waiter.withdrawing = false;
    this.waiters.delete(waiter.slotId);
    if (waiter.settled) return;
    this.settle(waiter);
    waiter.failed(error);
  }

  private giveBack(waiter: Caller): void {
    try {
      const answer = this.store.release(waiter.entry!.name, waiter.slotId);
      if (answer instanceof Promise) answer.catch(ignore);
    } catch {
      // The store is unreachable: the lease frees the slot within one term.
    }
  }
}

function ignore(): void {}
