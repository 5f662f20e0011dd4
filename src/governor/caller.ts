import type { HeldSlot } from "../store/types.js";
import type { PoolEntry } from "./pool-registry.js";
import { anchorShape } from "./shape-anchors.js";
import type { RunContext } from "./types.js";

/** The function given to `run()`, with its result type erased. */
export type RunFn = (context: RunContext) => unknown;

/** A handoff the waiting room saw before it could apply it (rare: async stores, races). */
export interface EarlyHandoff {
  slot: HeldSlot;
  queuedMs: number;
}

const SETTLED = 1;
const WITHDRAWING = 2;
const IN_ROOM = 4;

/**
 * One `acquire()` or `run()` call, from its admission until it holds a slot or fails. It is
 * also the queue entry of the waiting room: one object per call keeps a queued caller small
 * (no promise or closure of its own beyond the promise handed back to the caller).
 *
 * Why so few fields: a burst queues every caller at once, and each byte of a queued caller is
 * copied and marked by the garbage collector while it waits. What only some callers need
 * (the grant before its run starts, a handoff seen early) lives elsewhere or in one field.
 * The promise's `reject` function is not kept either (it would stay alive with its caller):
 * a failure resolves the promise with a rejected one, which settles it the same way.
 *
 * @example
 * ```ts
 * const grant = await new Promise((resolve) => admit(new Caller(resolve, undefined, signal)));
 * ```
 */
export class Caller {
  entry: PoolEntry | undefined = undefined;
  slotId = "";
  /** The wait budget in ms (already clamped). */
  waitMs = 0;
  /**
   * Epoch ms of the admission. It starts as a double (NaN until admission) because it holds
   * one: a field that turns from small integer to double changes the hidden class of every
   * caller, which throws away the optimised code built on it.
   */
  enqueuedAt = Number.NaN;
  /**
   * A handoff that arrived before the acquire's "queued" answer (async stores), or one that
   * raced the cancel in flight: its `queuedMs` is the store's own queue wait, measured at the
   * handoff on the store's clock, so it is exact even when the cancel's answer is late.
   */
  handoff: EarlyHandoff | undefined = undefined;
  /** In the waiting room, linked to the others there (owned by the room). */
  prevInRoom: Caller | null = null;
  nextInRoom: Caller | null = null;
  onAbort: (() => void) | undefined = undefined;
  /** {@link SETTLED}, {@link WITHDRAWING}, {@link IN_ROOM}: one small integer, not three fields. */
  private flags = 0;

  constructor(
    /** Settles the caller's promise: with a value, or with a rejected promise on failure. */
    readonly resolve: (value: never) => void,
    /** `run()`'s function; undefined for `acquire()`, which resolves with the grant. */
    readonly fn: RunFn | undefined,
    readonly signal: AbortSignal | undefined,
  ) {}

  /** Resolved or rejected: nothing more may happen to it. */
  get settled(): boolean {
    return (this.flags & SETTLED) !== 0;
  }

  set settled(value: boolean) {
    this.flags = value ? this.flags | SETTLED : this.flags & ~SETTLED;
  }

  /** A cancel is in flight: its answer, not a racing grant, decides the outcome. */
  get withdrawing(): boolean {
    return (this.flags & WITHDRAWING) !== 0;
  }

  set withdrawing(value: boolean) {
    this.flags = value ? this.flags | WITHDRAWING : this.flags & ~WITHDRAWING;
  }

  /** In the waiting room (owned by the room). */
  get inRoom(): boolean {
    return (this.flags & IN_ROOM) !== 0;
  }

  set inRoom(value: boolean) {
    this.flags = value ? this.flags | IN_ROOM : this.flags & ~IN_ROOM;
  }

  failed(error: unknown): void {
    (this.resolve as (value: unknown) => void)(rejectedWith(error));
  }
}

// The class of callers outlives them (see `anchorShape`).
anchorShape(new Caller(ignore, undefined, undefined));

/**
 * A rejected promise to settle a caller's promise with. It is marked handled at once: should
 * the caller's promise be settled already, it must not surface as an unhandled rejection (the
 * caller's own promise still reports one when nobody handles it).
 *
 * @example
 * ```ts
 * resolve(rejectedWith(new QueueTimeoutError(waitMs))); // the caller's promise rejects with it
 * ```
 */
export function rejectedWith(error: unknown): Promise<never> {
  const rejected = Promise.reject(error);
  rejected.catch(ignore);
  return rejected;
}

function ignore(): void {}
