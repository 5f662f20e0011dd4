import { LRUCache } from "lru-cache";
import type { Clock } from "../clock/clock.js";
import { AbortedError, QueueTimeoutError } from "../errors.js";
import type { HeldSlot, SlotStore, StoreCancelResult } from "../store/types.js";
import type { EarlyHandoff } from "./caller.js";
import { Caller } from "./caller.js";
import { DeadlineTimer } from "./deadline-timer.js";
import type { PoolEntry } from "./pool-registry.js";
import { releaseQuietly } from "./release-quietly.js";

/** Where the room hands slots over (the governor). */
export interface GrantDelivery {
  /**
   * Hands a slot to its caller after `queuedMs` in the queue: resolves an `acquire()` with
   * its grant, starts a `run()`. A method, not a closure, for the reason given in `StoreEvents`.
   */
  deliver(caller: Caller, slot: HeldSlot, queuedMs: number): void;
}

/**
 * The callers of this process that wait in a store's queue. The store hands slots over
 * (`granted`); the room resolves the matching promise. Wait budgets share one timer, an
 * abort leaves the queue at once, and a timeout or abort that races a handoff asks the store,
 * whose answer wins: no slot is ever granted twice or lost.
 *
 * An in-process store hands each waiter's caller back with its handoff
 * (`SlotStore.returnsWaiters`); for the others the room keeps an index by slot id.
 *
 * @example
 * ```ts
 * room.wait(caller); // the caller's promise settles on a handoff, its timeout or its abort
 * ```
 */
export class WaitingRoom {
  /** By slot id, for stores that do not hand the caller back; null for those that do. */
  private readonly index: Map<string, Caller> | null;
  /** Every caller in the room, linked through the callers (for `rejectAll`). */
  private first: Caller | null = null;
  private count = 0;
  private readonly timeouts: DeadlineTimer<Caller>;
  /** Handoffs that arrived before their acquire answered "queued" (indexed stores only). */
  private earlyGrants: LRUCache<string, EarlyHandoff> | undefined;
  /** Ends the clock's keep-alive; set while the room holds anyone (see `Clock.keepAlive`). */
  private letProcessExit: (() => void) | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly store: SlotStore,
    private readonly delivery: GrantDelivery,
  ) {
    this.index = store.returnsWaiters === true ? null : new Map();
    this.timeouts = new DeadlineTimer(
      clock,
      (waiter) => this.withdraw(waiter, "timeout"),
      isWaiting,
    );
  }

  get size(): number {
    return this.count;
  }

  /** Queues a caller the store answered "queued" (its entry, slotId, waitMs and enqueuedAt set). */
  wait(waiter: Caller): void {
    const early = waiter.handoff ?? this.takeEarlyGrant(waiter.slotId);
    if (early) {
      waiter.handoff = undefined;
      if (waiter.signal?.aborted) {
        // Aborted before the store's answers arrived: the slot handed over goes back.
        this.settleAborted(waiter);
        this.giveBack(waiter);
        return;
      }
      this.settleGranted(waiter, early.slot, early.queuedMs);
      return;
    }
    this.enter(waiter);
    this.timeouts.add(waiter.enqueuedAt + waiter.waitMs, waiter);
    const signal = waiter.signal;
    if (signal) {
      waiter.onAbort = () => this.withdraw(waiter, "abort");
      if (signal.aborted) waiter.onAbort();
      else signal.addEventListener("abort", waiter.onAbort, { once: true });
    }
  }

  /**
   * The store handed a slot to a waiter: ours (`handedBack`, or found by slot id), or another
   * process's (then it is kept briefly, in case our acquire's answer is still on its way).
   */
  granted(slot: HeldSlot, queuedMs: number, handedBack?: unknown): void {
    const waiter = handedBack instanceof Caller ? handedBack : this.index?.get(slot.slotId);
    if (!waiter) {
      this.earlyGrants ??= new LRUCache({ max: 10_000, ttl: 60_000 });
      this.earlyGrants.set(slot.slotId, { slot, queuedMs });
      return;
    }
    if (waiter.withdrawing) {
      // The cancel in flight will answer "granted" and decide; keep the store's exact wait for it.
      waiter.handoff = { slot, queuedMs };
      return;
    }
    if (waiter.settled) {
      // Rejected meanwhile without a cancel (pool removed, governor closed): nobody takes it.
      this.giveBack(waiter);
      return;
    }
    if (!waiter.inRoom) {
      // Handed over before the acquire's "queued" answer arrived: `wait` applies it.
      waiter.handoff = { slot, queuedMs };
      return;
    }
    this.settleGranted(waiter, slot, queuedMs);
  }

  /** Rejects every waiter of one pool (or all when `entry` is undefined) without asking the store. */
  rejectAll(error: () => unknown, entry?: PoolEntry): void {
    const rejected: Caller[] = [];
    for (let waiter = this.first; waiter !== null; waiter = waiter.nextInRoom) {
      if (!waiter.settled && (!entry || waiter.entry === entry)) rejected.push(waiter);
    }
    for (const waiter of rejected) this.turnAway(waiter, error());
    if (!entry) this.timeouts.clear();
  }

  /**
   * Fails one waiter now (the governor drained or closed while its acquire was answered). A
   * slot the store hands it later goes back, as for every settled waiter.
   */
  turnAway(waiter: Caller, error: unknown): void {
    if (waiter.settled) return;
    this.settle(waiter);
    waiter.failed(error);
  }

  private takeEarlyGrant(slotId: string): EarlyHandoff | undefined {
    const early = this.earlyGrants?.get(slotId);
    if (early) this.earlyGrants!.delete(slotId);
    return early;
  }

  private enter(waiter: Caller): void {
    waiter.inRoom = true;
    this.index?.set(waiter.slotId, waiter);
    waiter.nextInRoom = this.first;
    if (this.first !== null) this.first.prevInRoom = waiter;
    this.first = waiter;
    if (this.count++ === 0) this.letProcessExit = this.clock.keepAlive?.();
  }

  /** The store no longer knows the caller as a waiter of ours. */
  private leave(waiter: Caller): void {
    if (!waiter.inRoom) return;
    waiter.inRoom = false;
    this.index?.delete(waiter.slotId);
    const { prevInRoom, nextInRoom } = waiter;
    if (prevInRoom === null) this.first = nextInRoom;
    else prevInRoom.nextInRoom = nextInRoom;
    if (nextInRoom !== null) nextInRoom.prevInRoom = prevInRoom;
    waiter.prevInRoom = null;
    waiter.nextInRoom = null;
    if (--this.count === 0) {
      this.letProcessExit?.();
      this.letProcessExit = undefined;
    }
  }

  private settleGranted(waiter: Caller, slot: HeldSlot, queuedMs: number): void {
    this.settle(waiter);
    const entry = waiter.entry!;
    // enqueuedAt + queuedMs is the time of the handoff: no clock read needed.
    entry.meter.admitted(waiter.enqueuedAt + queuedMs, queuedMs);
    this.delivery.deliver(waiter, slot, queuedMs);
  }

  /**
   * The caller's promise is settled. A waiter whose cancel is in flight stays in the room
   * until the answer, so a handoff that raced it is recognised and given back.
   */
  private settle(waiter: Caller): void {
    waiter.settled = true;
    if (!waiter.withdrawing) this.leave(waiter);
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
    this.leave(waiter);
    if (!waiter.settled && waiter.signal?.aborted) this.settleAborted(waiter);
    if (result.type === "granted") {
      if (!waiter.settled) {
        // A timeout lost to a handoff by a hair: the caller keeps its slot. The wait ends at
        // the handoff, not at this answer; the store's clock may differ from ours, hence ≥ 0.
        const queuedMs =
          waiter.handoff !== undefined
            ? waiter.handoff.queuedMs
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
    this.timedOut(waiter);
  }

  /** The wait ran its whole budget; `cause`: why the store could not confirm it. */
  private timedOut(waiter: Caller, cause?: unknown): void {
    this.settle(waiter);
    const deadline = waiter.enqueuedAt + waiter.waitMs;
    waiter.entry!.meter.timedOut(deadline);
    const options = cause === undefined ? undefined : { cause };
    waiter.failed(new QueueTimeoutError(waiter.waitMs, waiter.entry!.limit, options));
  }

  private settleAborted(waiter: Caller): void {
    this.settle(waiter);
    waiter.failed(new AbortedError(waiter.signal?.reason));
  }

  /**
   * The store could not answer the cancel of a timed-out waiter (an abort settled already): a
   * slot handed over meanwhile is freed by its lease. The caller still waited its whole budget,
   * so it gets `QueueTimeoutError` (the store's error as its `cause`), as when Redis answers.
   */
  private cancelFailed(waiter: Caller, error: unknown): void {
    waiter.withdrawing = false;
    this.leave(waiter);
    if (waiter.settled) return;
    this.timedOut(waiter, error);
  }

  private giveBack(waiter: Caller): void {
    releaseQuietly(this.store, waiter.entry!.name, waiter.slotId);
  }
}

/**
 * A waiter whose wait still runs. A module function, not a closure per room: optimised code
 * that inlines it then refers to nothing that dies with a governor.
 */
function isWaiting(waiter: Caller): boolean {
  return !waiter.settled && !waiter.withdrawing;
}
