import type { Caller } from "./caller.js";
import type { Holds } from "./holds.js";
import type { HoldOwner } from "./local-hold.js";
import { LocalHold } from "./local-hold.js";
import type { SlotGrant } from "./types.js";

/**
 * Starts the functions of `run()` callers that got their slot. A function starts on a later
 * microtask, never inside the call that granted it (a release would otherwise recurse into
 * the next run); callers granted meanwhile share one microtask.
 *
 * @example
 * ```ts
 * const runs = new RunStarter(holds, governor);
 * runs.start(caller, grant); // caller.fn runs in the slot, then it is released
 * ```
 */
export class RunStarter {
  private readonly callers: Caller[] = [];
  /** The grant of each caller in `callers`, at the same index. */
  private readonly grants: SlotGrant[] = [];
  private readonly startAll = () => this.startBatch();

  constructor(
    private readonly holds: Holds,
    private readonly owner: HoldOwner,
  ) {}

  start(caller: Caller, grant: SlotGrant): void {
    this.callers.push(caller);
    this.grants.push(grant);
    if (this.callers.length === 1) queueMicrotask(this.startAll);
  }

  private startBatch(): void {
    const callers = this.callers;
    const grants = this.grants;
    // Runs that finish synchronously may grant (and append) more callers: read the length anew.
    for (let index = 0; index < callers.length; index++) {
      const caller = callers[index]!;
      const grant = grants[index]!;
      // The grant's instant on this process's clock (admission plus the store's queue wait),
      // which only schedules the first renewal: no clock read needed.
      const grantedAt = caller.enqueuedAt + grant.queuedMs;
      const hold = startHold(
        this.holds,
        this.owner,
        caller.entry!.name,
        grant,
        caller.signal,
        grantedAt,
      );
      hold.run(caller.fn!, caller.resolve as (value: unknown) => void);
    }
    callers.length = 0;
    grants.length = 0;
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
  const hold = new LocalHold(owner, pool, grant, signal);
  holds.track(hold, grantedAt);
  return hold;
}
