import type { Clock } from "../clock/clock.js";
import type { MaybePromise, SlotStore, StoreRenewResult } from "../store/types.js";
import type { KeptLease } from "./lease-keeper.js";
import { LeaseKeeper } from "./lease-keeper.js";
import type { LocalHold } from "./local-hold.js";

/**
 * The slots this process holds for `run()` and `fetch()`: their leases are renewed while the
 * work runs (one {@link LeaseKeeper} per renew interval, which also indexes the holds by slot
 * id), and a hold hears when its slot is capped or lost.
 *
 * @example
 * ```ts
 * const holds = new Holds(clock, store);
 * holds.track(hold, clock.now());
 * holds.untrack(hold);
 * ```
 */
export class Holds {
  private readonly keepers = new Map<number, LeaseKeeper>();
  private lastKeeper: LeaseKeeper | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly store: SlotStore,
  ) {}

  track(hold: LocalHold, now: number): void {
    this.keeperFor(hold.renewIntervalMs).track(hold, now);
  }

  untrack(hold: LocalHold): void {
    hold.keptBy?.untrack(hold);
  }

  /**
   * Tells the holds among `slotIds` that their slot is gone (reclaimed). One pass over this
   * process's holds: reclaims are rare, so no index by slot id is kept on the hot path.
   */
  lost(slotIds: readonly string[]): void {
    let held = 0;
    for (const keeper of this.keepers.values()) held += keeper.size;
    if (held === 0) return;
    const gone = new Set(slotIds);
    for (const hold of this.holdsWhere((lease) => gone.has(lease.slotId))) hold.onLost();
  }

  /** Stops renewing, and aborts the work of every hold with `error` (the governor closed). */
  stop(error: Error): void {
    const held = this.holdsWhere(() => true);
    for (const keeper of this.keepers.values()) keeper.stop();
    for (const hold of held) hold.stopWork(error);
  }

  /** Aborts the work of the holds of `pool` with `error` (the pool was removed under them). */
  stopPool(pool: string, error: Error): void {
    for (const hold of this.holdsWhere((lease) => lease.pool === pool)) hold.stopWork(error);
  }

  /** The holds whose lease passes `wanted`, collected first (stopping one untracks it). */
  private holdsWhere(wanted: (lease: KeptLease) => boolean): LocalHold[] {
    const held: LocalHold[] = [];
    for (const keeper of this.keepers.values()) {
      keeper.forEach((lease) => {
        if (wanted(lease)) held.push(lease as LocalHold);
      });
    }
    return held;
  }

  private keeperFor(renewIntervalMs: number): LeaseKeeper {
    // Pools mostly share one renew interval: the last keeper saves a map lookup per hold.
    const last = this.lastKeeper;
    if (last !== null && last.renewIntervalMs === renewIntervalMs) return last;
    let keeper = this.keepers.get(renewIntervalMs);
    if (!keeper) {
      keeper = new LeaseKeeper(this.clock, renewIntervalMs, (lease) => this.renew(lease));
      this.keepers.set(renewIntervalMs, keeper);
    }
    this.lastKeeper = keeper;
    return keeper;
  }

  private renew(lease: KeptLease): void {
    const hold = lease as LocalHold;
    let answer: MaybePromise<StoreRenewResult>;
    try {
      answer = this.store.renew(lease.pool, lease.slotId);
    } catch {
      return; // Unreachable store: try again at the next sweep; the lease still runs.
    }
    if (answer instanceof Promise) answer.then((result) => onRenewed(hold, result), ignore);
    else onRenewed(hold, answer);
  }
}

function onRenewed(hold: LocalHold, result: StoreRenewResult): void {
  if (result.type === "capped") hold.onCapped(result.requestDeadline);
  else if (result.type === "not_found") hold.onLost();
}

function ignore(): void {}
