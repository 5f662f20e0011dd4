import type { HeldSlot } from "../store/types.js";
import type { Caller } from "./caller.js";
import type { Holds } from "./holds.js";
import type { HoldOwner } from "./local-hold.js";
import { LocalHold } from "./local-hold.js";
import type { SlotGrant } from "./types.js";

const STARTED = Promise.resolve();

/**
 * Starts the functions of `run()` callers that got their slot. A function starts on a later
 * microtask, never inside the call that granted it (a release would otherwise recurse into
 * the next run); callers granted meanwhile share one microtask.
 *
 * @example
 * ```ts
 * const runs = new RunStarter(holds, governor, () => undefined);
 * runs.start(caller, slot, queuedMs); // caller.fn runs in the slot, then it is released
 * ```
 */
export class RunStarter {
  private readonly callers: Caller[] = [];
  /** The hold of each caller in `callers`, at the same index. */
  private readonly holds: LocalHold[] = [];
  private readonly startAll = () => this.startBatch();

  /**
   * @param refusal Why a granted caller must not start after all (its governor closed or its
   *   pool was removed since the grant, in the same microtask), or undefined.
   */
  constructor(
    private readonly tracker: Holds,
    private readonly owner: HoldOwner,
    private readonly refusal: (caller: Caller) => Error | undefined,
  ) {}

  /**
   * `caller` (its entry set) was handed `slot` after `queuedMs` in the queue. Its grant is
   * made only if its function reads it, from the pool as it is now.
   */
  start(caller: Caller, slot: HeldSlot, queuedMs: number): void {
    const entry = caller.entry!;
    this.callers.push(caller);
    this.holds.push(
      LocalHold.forSlot(
        this.owner,
        entry.name,
        slot,
        entry.settings,
        entry.limit,
        queuedMs,
        caller.signal,
      ),
    );
    // A resolved promise, not `queueMicrotask`: Node wraps each of those in an AsyncResource.
    if (this.callers.length === 1) STARTED.then(this.startAll);
  }

  private startBatch(): void {
    const callers = this.callers;
    const holds = this.holds;
    // Runs that finish synchronously may grant (and append) more callers: read the length anew.
    for (let index = 0; index < callers.length; index++) {
      const caller = callers[index]!;
      const hold = holds[index]!;
      const refused = this.refusal(caller);
      if (refused) {
        hold.refuse(refused, caller.resolve as (value: unknown) => void);
        continue;
      }
      // The grant's instant on this process's clock (admission plus the store's queue wait),
      // which only schedules the first renewal: no clock read needed.
      this.tracker.track(hold, caller.enqueuedAt + hold.queuedMs);
      hold.run(caller.fn!, caller.resolve as (value: unknown) => void);
    }
    callers.length = 0;
    holds.length = 0;
  }
}

/**
 * A hold on a granted slot whose lease this process renews until the hold finishes.
 *
 * @example
 * ```ts
 * const hold = startHold(holds, governor, "llm", grant, signal, clock.now());
 * ```
 */
export function startHold(
  holds: Holds,
  owner: HoldOwner,
  pool: string,
  grant: SlotGrant,
  signal: AbortSignal | undefined,
  grantedAt: number,
): LocalHold {
  const hold = LocalHold.forGrant(owner, pool, grant, signal);
  holds.track(hold, grantedAt);
  return hold;
}
