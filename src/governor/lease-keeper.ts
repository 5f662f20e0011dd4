import type { Clock, TimerHandle } from "../clock/clock.js";

/** A slot held by this process on behalf of `run()` or `fetch()`; `renewAt` is the keeper's. */
export interface KeptLease {
  readonly pool: string;
  readonly slotId: string;
  renewAt: number;
}

/**
 * Renews the leases of slots that this process holds for `run()`/`fetch()`, so long calls keep
 * their slot while a crashed process loses it within one term. One keeper per renew interval:
 * its map is in renewal order, so a sweep stops at the first lease not yet due and tracking
 * or untracking a slot is one map operation.
 *
 * @example
 * ```ts
 * const keeper = new LeaseKeeper(clock, 10_000, (lease) => governor.renewKept(lease));
 * keeper.track(hold, clock.now()); // any { pool, slotId, renewAt }
 * keeper.untrack(hold.slotId);
 * ```
 */
export class LeaseKeeper {
  private readonly leases = new Map<string, KeptLease>();
  private timer: TimerHandle | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly renewIntervalMs: number,
    private readonly renew: (lease: KeptLease) => void,
  ) {}

  /** Starts renewing `lease` every interval from `now` (the caller's clock reading). */
  track(lease: KeptLease, now: number): void {
    lease.renewAt = now + this.renewIntervalMs;
    this.leases.set(lease.slotId, lease);
    if (this.timer === null) this.arm(this.renewIntervalMs);
  }

  untrack(slotId: string): void {
    this.leases.delete(slotId);
  }

  /** The tracked lease of `slotId`, if any. */
  get(slotId: string): KeptLease | undefined {
    return this.leases.get(slotId);
  }

  get size(): number {
    return this.leases.size;
  }

  stop(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.leases.clear();
  }

  private arm(delayMs: number): void {
    this.timer = this.clock.setTimeout(() => this.sweep(), delayMs);
  }

  private sweep(): void {
    this.timer = null;
    const now = this.clock.now();
    const due: KeptLease[] = [];
    for (const lease of this.leases.values()) {
      if (lease.renewAt > now) break;
      due.push(lease);
    }
    for (const lease of due) {
      // Move to the back: the map stays ordered by next renewal.
      this.leases.delete(lease.slotId);
      lease.renewAt = now + this.renewIntervalMs;
      this.leases.set(lease.slotId, lease);
      this.renew(lease);
    }
    const first = this.leases.values().next();
    if (!first.done) this.arm(Math.max(0, first.value.renewAt - now));
  }
}
