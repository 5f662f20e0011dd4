import type { Clock, TimerHandle } from "../clock/clock.js";
import { AbortedError, SlotCappedError, SlotNotFoundError } from "../errors.js";
import type { OutcomeReport } from "../learning/types.js";
import type { MaybePromise } from "../store/types.js";
import type { RunFn } from "./caller.js";
import { rejectedWith } from "./caller.js";
import type { KeptLease, LeaseKeeper } from "./lease-keeper.js";
import type { RunContext, SlotGrant } from "./types.js";

/** What a {@link LocalHold} needs from its governor. */
export interface HoldOwner {
  readonly clock: Clock;
  /**
   * Releases the slot with the reported outcome; never throws (the lease is the backstop).
   * Answers synchronously when the store does.
   */
  finishHold(hold: LocalHold): MaybePromise<void>;
}

/**
 * A slot held by this process for the length of a `run()` or governed `fetch()`: it carries
 * the outcome to report, and a lazily created AbortSignal that fires when the caller aborts,
 * the slot hits its request deadline, or the slot is lost (reclaimed).
 *
 * @example
 * ```ts
 * const hold = new LocalHold(owner, "llm", grant, options.signal);
 * try { await work(hold.signal); } finally { await hold.finish(); }
 * ```
 */
export class LocalHold implements RunContext, KeptLease {
  outcome: OutcomeReport | undefined;
  readonly slotId: string;
  /** When the lease keeper renews this slot next, and its list links (owned by the keeper). */
  renewAt = 0;
  keptPrev: KeptLease | null = null;
  keptNext: KeptLease | null = null;
  keptBy: LeaseKeeper | null = null;
  private controller: AbortController | undefined;
  private abortReason: unknown;
  private aborted = false;
  private finished = false;
  private capTimer: TimerHandle | null = null;
  private callerListener: (() => void) | undefined;

  constructor(
    private readonly owner: HoldOwner,
    readonly pool: string,
    readonly grant: SlotGrant,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.slotId = grant.slotId;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.abortReason);
      else this.linkCallerSignal();
    }
    return this.controller.signal;
  }

  report(outcome: OutcomeReport): void {
    this.outcome = outcome;
  }

  /** The lease keeper found the slot at its request cap: abort the work at the deadline. */
  onCapped(requestDeadline: number): void {
    if (this.capTimer !== null || this.finished) return;
    const delay = Math.max(0, requestDeadline - this.owner.clock.now());
    this.capTimer = this.owner.clock.setTimeout(
      () => this.abort(new SlotCappedError(requestDeadline)),
      delay,
    );
  }

  /** The slot was reclaimed under us (the process stalled past a term): stop the work. */
  onLost(): void {
    if (this.finished) return;
    this.abort(new SlotNotFoundError(this.grant.slotId));
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

  /** Releases the slot once, with the reported outcome (or `outcome` when given). */
  finish(outcome?: OutcomeReport): MaybePromise<void> {
    if (this.finished) return;
    this.finished = true;
    if (outcome !== undefined) this.outcome = outcome;
    if (this.capTimer !== null) this.owner.clock.clearTimeout(this.capTimer);
    if (this.callerListener) this.callerSignal?.removeEventListener("abort", this.callerListener);
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
  }

  private linkCallerSignal(): void {
    const caller = this.callerSignal;
    if (!caller) return;
    if (caller.aborted) {
      this.abort(caller.reason);
      return;
    }
    this.callerListener = () => this.abort(caller.reason);
    caller.addEventListener("abort", this.callerListener, { once: true });
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
