import type { HeldSlot } from "../store/types.js";
import type { PoolEntry } from "./pool-registry.js";
import type { RunContext, SlotGrant } from "./types.js";

/** The function given to `run()`, with its result type erased. */
export type RunFn = (context: RunContext) => unknown;

/** What a caller needs from its governor once it holds a slot. */
export interface CallerOwner {
  /** Runs `caller.fn` in the granted slot (on a later tick) and settles the caller's promise. */
  startRun(caller: Caller): void;
}

/**
 * One `acquire()` or `run()` call, from its admission until it holds a slot or fails. It is
 * also the queue entry of the waiting room: one object per call keeps a queued caller small
 * (no promise or closure of its own beyond the promise handed back to the caller).
 *
 * @example
 * ```ts
 * const grant = await new Promise((resolve, reject) => admit(new Caller(resolve, reject, undefined, signal, owner)));
 * ```
 */
export class Caller {
  entry: PoolEntry | undefined = undefined;
  slotId = "";
  /** The wait budget in ms (already clamped). */
  waitMs = 0;
  enqueuedAt = 0;
  /** Resolved or rejected: nothing more may happen to it. */
  settled = false;
  /** A cancel is in flight: its answer, not a racing grant, decides the outcome. */
  withdrawing = false;
  /**
   * The store's own queue wait of a handoff that raced the cancel in flight (-1: none seen):
   * measured at the handoff on the store's clock, so it is exact even when the answer is late.
   */
  handoffQueuedMs = -1;
  /** A handoff that arrived before the acquire's "queued" answer (async stores). */
  handoff: { slot: HeldSlot; queuedMs: number } | undefined = undefined;
  /** In the waiting room, linked to the others there (owned by the room). */
  inRoom = false;
  prevInRoom: Caller | null = null;
  nextInRoom: Caller | null = null;
  onAbort: (() => void) | undefined = undefined;
  /** Set when a slot is granted to a `run()` caller, until its function starts. */
  grant: SlotGrant | undefined = undefined;

  constructor(
    readonly resolve: (value: never) => void,
    readonly reject: (error: unknown) => void,
    /** `run()`'s function; undefined for `acquire()`, which resolves with the grant. */
    readonly fn: RunFn | undefined,
    readonly signal: AbortSignal | undefined,
    private readonly owner: CallerOwner,
  ) {}

  /** The caller holds a slot now. */
  granted(grant: SlotGrant): void {
    if (this.fn === undefined) {
      (this.resolve as (value: SlotGrant) => void)(grant);
      return;
    }
    this.grant = grant;
    this.owner.startRun(this);
  }

  failed(error: unknown): void {
    this.reject(error);
  }
}
