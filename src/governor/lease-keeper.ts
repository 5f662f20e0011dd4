import type { Clock, TimerHandle } from "../clock/clock.js";

/**
 * A slot held by this process on behalf of `run()` or `fetch()`. The other fields belong to
 * the keeper: `renewAt` and the links of its list.
 */
export interface KeptLease {
  readonly pool: string;
  readonly slotId: string;
  renewAt: number;
  keptPrev: KeptLease | null;
  keptNext: KeptLease | null;
  keptBy: LeaseKeeper | null;
}

/**
 * Renews the leases of slots that this process holds for `run()`/`fetch()`, so long calls keep
 * their slot while a crashed process loses it within one term. One keeper per renew interval:
 * its leases form a list in renewal order (tracking appends, a sweep moves due leases to the
 * back), linked through the leases themselves, so tracking and untracking a slot allocate
 * nothing and hash nothing.
 *
 * @example
 * ```ts
 * const keeper = new LeaseKeeper(clock, 10_000, (lease) => governor.renewKept(lease));
 * keeper.track(hold, clock.now()); // any KeptLease, e.g. a LocalHold
 * keeper.untrack(hold);
 * ```
 */
export class LeaseKeeper {
  private head: KeptLease | null = null;
  private tail: KeptLease | null = null;
  private count = 0;
  private timer: TimerHandle | null = null;

  constructor(
    private readonly clock: Clock,
    readonly renewIntervalMs: number,
    private readonly renew: (lease: KeptLease) => void,
  ) {}

  /** Starts renewing `lease` every interval from `now` (the caller's clock reading). */
  track(lease: KeptLease, now: number): void {
    if (lease.keptBy !== null) lease.keptBy.untrack(lease);
    lease.renewAt = now + this.renewIntervalMs;
    this.append(lease);
    if (this.timer === null) this.arm(this.renewIntervalMs);
  }

  untrack(lease: KeptLease): void {
    if (lease.keptBy !== this) return;
    this.unlink(lease);
  }

  /** Calls `visit` for every tracked lease (for rare lookups: no index is kept). */
  forEach(visit: (lease: KeptLease) => void): void {
    for (let lease = this.head; lease !== null; ) {
      const next = lease.keptNext;
      visit(lease);
      lease = next;
    }
  }

  get size(): number {
    return this.count;
  }

  stop(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    while (this.head !== null) this.unlink(this.head);
  }

  private append(lease: KeptLease): void {
    lease.keptBy = this;
    lease.keptPrev = this.tail;
    lease.keptNext = null;
    if (this.tail === null) this.head = lease;
    else this.tail.keptNext = lease;
    this.tail = lease;
    this.count++;
  }

  private unlink(lease: KeptLease): void {
    if (lease.keptPrev === null) this.head = lease.keptNext;
    else lease.keptPrev.keptNext = lease.keptNext;
    if (lease.keptNext === null) this.tail = lease.keptPrev;
    else lease.keptNext.keptPrev = lease.keptPrev;
    lease.keptPrev = null;
    lease.keptNext = null;
    lease.keptBy = null;
    this.count--;
  }

  private arm(delayMs: number): void {
    this.timer = this.clock.setTimeout(() => this.sweep(), delayMs);
  }

  private sweep(): void {
    this.timer = null;
    const now = this.clock.now();
    // A moved lease is due only after `now`, so the loop ends once it has seen every due one.
    // `renew` may untrack leases (a lost slot ends its work): the head is read anew each time.
    while (this.head !== null && this.head.renewAt <= now) {
      const lease = this.head;
      this.unlink(lease);
      lease.renewAt = now + this.renewIntervalMs;
      this.append(lease);
      this.renew(lease);
    }
    if (this.head !== null) this.arm(Math.max(0, this.head.renewAt - now));
  }
}
