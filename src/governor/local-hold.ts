import type { Clock, TimerHandle } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import { AbortedError, SlotCappedError, SlotNotFoundError } from "../errors.js";
import type { OutcomeReport } from "../learning/types.js";
import type { HeldSlot, MaybePromise } from "../store/types.js";
import type { RunFn } from "./caller.js";
import { rejectedWith } from "./caller.js";
import { grantOf } from "./grants.js";
import type { KeptLease, LeaseKeeper } from "./lease-keeper.js";
import type { PoolSettings } from "./settings.js";

/**
 * Why `run()`/`fetch()` work is cut off at its request deadline: the governor releases its slot
 * itself, so unlike a renew's `SlotCappedError` there is nothing for the caller to release.
 */
const WORK_CAPPED_MESSAGE =
  "The work reached the pool's request timeout (requestTimeoutMs) and was cut off; its slot is released.";

import { anchorShape } from "./shape-anchors.js";
import type { RunContext, SlotGrant } from "./types.js";

/** What a {@link LocalHold} needs from its governor. */
export interface HoldOwner {
  readonly clock: Clock;
  /**
   * Releases the slot with the reported outcome; never throws (the lease is the backstop).
   * Answers synchronously when the store does.
   */
  finishHold(hold: LocalHold): MaybePromise<void>;
  /** Learns from `outcome` now, the slot still held; never throws. */
  learnFromHeld(hold: LocalHold, outcome: OutcomeReport): MaybePromise<void>;
}

/**
 * A slot held by this process for the length of a `run()` or governed `fetch()`: it carries
 * the outcome to report, and a lazily created AbortSignal that fires when the caller aborts,
 * the slot hits its request deadline, or the slot is lost (reclaimed).
 *
 * @example
 * ```ts
 * const hold = LocalHold.forGrant(owner, "llm", grant, options.signal);
 * try { await work(hold.signal); } finally { await hold.finish(); }
 * ```
 */
export class LocalHold implements RunContext, KeptLease {
  outcome: OutcomeReport | undefined;
  readonly slotId: string;
  readonly renewIntervalMs: number;
  /**
   * When the lease keeper renews this slot next, and its list links (owned by the keeper).
   * A double from the start (NaN until tracked), as it holds one: see `Caller.enqueuedAt`.
   */
  renewAt = Number.NaN;
  keptPrev: KeptLease | null = null;
  keptNext: KeptLease | null = null;
  keptBy: LeaseKeeper | null = null;
  private controller: AbortController | undefined;
  private abortReason: unknown;
  private aborted = false;
  private finished = false;
  /** The outcome was learned before the release (see learnNow): the release reports none. */
  private learnedEarly = false;
  private capTimer: TimerHandle | null = null;
  private callerListener: (() => void) | undefined;
  private callerLinked = false;
  private abortListeners: ((reason: unknown) => void)[] | null = null;
  /** `report` as a function of its own (`fn` may destructure it), made when first read. */
  private reporter: ((outcome: OutcomeReport) => void) | undefined;
  /** `onAbort` as a function of its own, made when first read (see {@link onAbort}). */
  private abortSubscriber: ((listener: (reason: unknown) => void) => () => void) | undefined;
  /**
   * The grant, once made. A `run()` hold makes it when `fn` first reads it (most never do),
   * from what it was at the grant: the slot, the pool's settings and effective limit.
   */
  private grantMade: SlotGrant | undefined;
  private readonly grantSlot: HeldSlot | undefined;
  private readonly grantSettings: PoolSettings | undefined;
  private readonly grantLimit: number;
  private readonly grantQueuedMs: number;

  /** Use {@link LocalHold.forGrant} or {@link LocalHold.forSlot}. */
  private constructor(
    private readonly owner: HoldOwner,
    readonly pool: string,
    private readonly callerSignal: AbortSignal | undefined,
    slotId: string,
    renewIntervalMs: number,
    grant: SlotGrant | undefined,
    slot: HeldSlot | undefined,
    settings: PoolSettings | undefined,
    limit: number,
    queuedMs: number,
  ) {
    this.slotId = slotId;
    this.renewIntervalMs = renewIntervalMs;
    this.grantMade = grant;
    this.grantSlot = slot;
    this.grantSettings = settings;
    this.grantLimit = limit;
    this.grantQueuedMs = queuedMs;
  }

  /** A hold on a slot whose grant is made already (`fetch()`). */
  static forGrant(
    owner: HoldOwner,
    pool: string,
    grant: SlotGrant,
    callerSignal: AbortSignal | undefined,
  ): LocalHold {
    const { slotId, renewIntervalMs } = grant;
    return new LocalHold(
      owner,
      pool,
      callerSignal,
      slotId,
      renewIntervalMs,
      grant,
      undefined,
      undefined,
      0,
      0,
    );
  }

  /**
   * A hold on a slot handed over now (`run()`): its grant is made when first read, from the
   * pool's `settings` and effective `limit` as they are now.
   */
  static forSlot(
    owner: HoldOwner,
    pool: string,
    slot: HeldSlot,
    settings: PoolSettings,
    limit: number,
    queuedMs: number,
    callerSignal: AbortSignal | undefined,
  ): LocalHold {
    return new LocalHold(
      owner,
      pool,
      callerSignal,
      slot.slotId,
      settings.renewIntervalMs,
      undefined,
      slot,
      settings,
      limit,
      queuedMs,
    );
  }

  /** Time the slot's caller spent in the queue. */
  get queuedMs(): number {
    return this.grantMade === undefined ? this.grantQueuedMs : this.grantMade.queuedMs;
  }

  get grant(): SlotGrant {
    this.grantMade ??= grantOf(
      this.grantSettings!,
      this.grantLimit,
      this.grantSlot!,
      this.grantQueuedMs,
    );
    return this.grantMade;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.abortReason);
      else this.linkCallerSignal();
    }
    return this.controller.signal;
  }

  /**
   * Calls `listener` when the work must stop. A getter, like {@link report}, so
   * `({ onAbort }) => …` works: the function it answers is made for an `fn` that reads it.
   */
  get onAbort(): (listener: (reason: unknown) => void) => () => void {
    this.abortSubscriber ??= (listener) => this.addAbortListener(listener);
    return this.abortSubscriber;
  }

  /** {@link onAbort} without making its function (the governor's own callers). */
  addAbortListener(listener: (reason: unknown) => void): () => void {
    // Work that finished hears nothing more (and links nothing to the caller's signal).
    if (this.finished) return noop;
    if (!this.aborted) this.linkCallerSignal();
    if (this.aborted) {
      listener(this.abortReason);
      return noop;
    }
    if (this.abortListeners) this.abortListeners.push(listener);
    else this.abortListeners = [listener];
    return () => {
      const listeners = this.abortListeners;
      const index = listeners ? listeners.indexOf(listener) : -1;
      if (index >= 0) listeners?.splice(index, 1);
    };
  }

  /**
   * Attaches an outcome to the release after `fn`. A getter, so `({ report }) => …` works:
   * the function it answers needs no `this`, and is only made for an `fn` that reads it.
   */
  get report(): (outcome: OutcomeReport) => void {
    this.reporter ??= (outcome) => {
      this.outcome = outcome;
    };
    return this.reporter;
  }

  /** The lease keeper found the slot at its request cap: abort the work at the deadline. */
  onCapped(requestDeadline: number): void {
    if (this.capTimer !== null || this.finished) return;
    const delay = Math.max(0, requestDeadline - this.owner.clock.now());
    this.capTimer = this.owner.clock.setTimeout(
      () => this.abort(new SlotCappedError(requestDeadline, WORK_CAPPED_MESSAGE)),
      delay,
    );
  }

  /**
   * The work must stop: the governor closed (nothing renews this lease any more) or the
   * pool was removed.
   */
  stopWork(error: Error): void {
    if (this.finished) return;
    this.abort(error);
  }

  /**
   * The slot is gone (reclaimed after a stall, or its lease ran out at the request deadline):
   * nothing renews it any more, and the work stops.
   */
  onLost(): void {
    this.keptBy?.untrack(this);
    if (this.finished) return;
    const { requestDeadline } = this.grant;
    // At the deadline the lease and the cap end together: the cap is why the work stops.
    const capped = this.owner.clock.now() >= requestDeadline;
    this.abort(
      capped
        ? new SlotCappedError(requestDeadline, WORK_CAPPED_MESSAGE)
        : new SlotNotFoundError(this.slotId),
    );
  }

  /**
   * Runs `fn` in this slot, releases it when `fn` returns, throws or rejects, and only then
   * settles with `fn`'s result through `resolve` (a failure as a rejected promise, see
   * {@link rejectedWith}). Does not start `fn` when the caller has already aborted.
   */
  run(fn: RunFn, resolve: (value: unknown) => void): void {
    let result: unknown;
    try {
      if (this.callerSignal?.aborted) throw new AbortedError(this.callerSignal.reason);
      result = fn(this);
    } catch (error) {
      this.finishThen(resolve, error, true);
      return;
    }
    if (isThenable(result)) {
      result.then(
        (value) => this.finishThen(resolve, value, false),
        (error) => this.finishThen(resolve, error, true),
      );
    } else {
      this.finishThen(resolve, result, false);
    }
  }

  /** Gives the slot back without running anything: the `run()` fails with `error`. */
  refuse(error: unknown, resolve: (value: unknown) => void): void {
    this.finishThen(resolve, error, true);
  }

  /**
   * Learns from the upstream's answer before the work is done (the head of a response whose
   * body is still coming): the release later reports nothing more.
   */
  learnNow(outcome: OutcomeReport): MaybePromise<void> {
    if (this.finished) return;
    this.outcome = undefined;
    this.learnedEarly = true;
    return this.owner.learnFromHeld(this, outcome);
  }

  /** Releases the slot once, with the reported outcome (or `outcome` when given). */
  finish(outcome?: OutcomeReport): MaybePromise<void> {
    if (this.finished) return;
    this.finished = true;
    if (outcome !== undefined && !this.learnedEarly) this.outcome = outcome;
    if (this.capTimer !== null) this.owner.clock.clearTimeout(this.capTimer);
    if (this.callerListener) this.callerSignal?.removeEventListener("abort", this.callerListener);
    this.abortListeners = null;
    return this.owner.finishHold(this);
  }

  /** Releases the slot, then settles: with `value`, or rejected with it when `failed`. */
  private finishThen(settle: (value: unknown) => void, value: unknown, failed: boolean): void {
    const done = this.finish();
    if (done instanceof Promise) done.then(() => settle(failed ? rejectedWith(value) : value));
    else settle(failed ? rejectedWith(value) : value);
  }

  get isFinished(): boolean {
    return this.finished;
  }

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
    const listeners = this.abortListeners;
    this.abortListeners = null;
    if (listeners) for (const listener of listeners) listener(reason);
  }

  /** Once, on first use of `signal` or `onAbort`: the caller's abort aborts this hold. */
  private linkCallerSignal(): void {
    const caller = this.callerSignal;
    if (!caller || this.callerLinked || this.finished) return;
    this.callerLinked = true;
    if (caller.aborted) {
      this.abort(caller.reason);
      return;
    }
    this.callerListener = () => this.abort(caller.reason);
    caller.addEventListener("abort", this.callerListener, { once: true });
  }
}

// The class of holds outlives them (see `anchorShape`).
anchorShape(
  LocalHold.forGrant(
    { clock: systemClock, finishHold: () => undefined, learnFromHeld: () => undefined },
    "",
    {
      slotId: "",
      leaseDeadline: 0,
      requestDeadline: 0,
      termMs: 0,
      renewIntervalMs: 0,
      remainingSlots: 0,
      effectiveLimit: 0,
      queuedMs: 0,
    },
    undefined,
  ),
);

function noop(): void {}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
