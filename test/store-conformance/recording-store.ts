import type { Clock } from "../../src/clock/clock.js";
import type {
  HeldSlot,
  LearnedLimits,
  MaybePromise,
  PoolSnapshot,
  SlotStore,
  StoreAcquireRequest,
  StoreAcquireResult,
  StoreCancelResult,
  StoreInspectResult,
  StoreListener,
  StorePoolConfig,
  StoreReleaseResult,
  StoreRenewResult,
} from "../../src/store/types.js";

/** A slot as the shadow believes the store holds it. */
export interface ShadowHolder {
  pool: string;
  slotId: string;
  acquiredAt: number;
  leaseDeadline: number;
  requestDeadline: number;
}

interface ShadowWaiter {
  pool: string;
  slotId: string;
  waitDeadline: number;
}

/** Every grant the store made, in the order it was observed. */
export interface GrantRecord {
  pool: string;
  slotId: string;
  acquiredAt: number;
}

/**
 * Whether a holder's lease is live over the span a command was in flight: a store may read
 * its clock when the command is sent or when it runs, so only a verdict that holds at both
 * ends is firm.
 */
function liveness(
  holder: ShadowHolder,
  askedAt: number,
  answeredAt: number,
): "live" | "dead" | "either" {
  const liveAtAsk = holder.leaseDeadline > askedAt;
  const liveAtAnswer = holder.leaseDeadline > answeredAt;
  if (liveAtAsk && liveAtAnswer) return "live";
  if (!liveAtAsk && !liveAtAnswer) return "dead";
  return "either";
}

function tap<T>(value: MaybePromise<T>, observe: (value: T) => void): MaybePromise<T> {
  if (value instanceof Promise) {
    return value.then((resolved) => {
      observe(resolved);
      return resolved;
    });
  }
  observe(value);
  return value;
}

/**
 * A transparent SlotStore wrapper for the governor properties: it forwards every call and
 * keeps a shadow of the store's state from the answers (holders, waiters, grant log), so that
 * store-level rules (FIFO handoff, no overtaking, no double grant, lease arithmetic, no early
 * reclaim) are checked on every event. Breaches are collected in `violations`.
 */
export class RecordingStore implements SlotStore {
  readonly kind: string;
  readonly returnsWaiters: boolean | undefined;
  readonly holders = new Map<string, ShadowHolder>();
  readonly waiters = new Map<string, ShadowWaiter>();
  readonly grantLog: GrantRecord[] = [];
  readonly reclaimedIds = new Set<string>();
  readonly violations: string[] = [];
  /** Called synchronously when the governor asks the store for a slot. */
  onAcquire: ((pool: string, request: StoreAcquireRequest) => void) | undefined;
  private readonly configs = new Map<string, StorePoolConfig>();
  private readonly requestedIds = new Set<string>();
  private readonly grantedIds = new Set<string>();
  private readonly cancelIssued = new Set<string>();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly inner: SlotStore,
    private readonly clock: Clock,
  ) {
    this.kind = inner.kind;
    this.returnsWaiters = inner.returnsWaiters;
  }

  now(): MaybePromise<number> {
    return this.inner.now();
  }

  setListener(listener: StoreListener): void {
    this.inner.setListener({
      granted: (pool, slot, queuedMs, waiter) => {
        this.observeHandoff(pool, slot, queuedMs);
        listener.granted(pool, slot, queuedMs, waiter);
      },
      reclaimed: (pool, slotIds) => {
        this.observeReclaim(pool, slotIds);
        listener.reclaimed(pool, slotIds);
      },
    });
  }

  upsertBudget(budget: string, originMaxConcurrent: number | null): MaybePromise<void> {
    return this.track(this.inner.upsertBudget(budget, originMaxConcurrent));
  }

  removeBudget(budget: string): MaybePromise<void> {
    return this.track(this.inner.removeBudget(budget));
  }

  upsertPool(pool: string, config: StorePoolConfig): MaybePromise<void> {
    this.configs.set(pool, { ...config });
    return this.track(this.inner.upsertPool(pool, config));
  }

  removePool(pool: string): MaybePromise<void> {
    return this.track(this.inner.removePool(pool));
  }

  acquire(pool: string, request: StoreAcquireRequest): MaybePromise<StoreAcquireResult> {
    if (this.requestedIds.has(request.slotId)) this.violate(`slot id ${request.slotId} reused`);
    this.requestedIds.add(request.slotId);
    this.onAcquire?.(pool, request);
    const askedAt = this.clock.now();
    return this.track(
      tap(this.inner.acquire(pool, request), (result) => {
        if (result.type === "granted") {
          this.checkNoOvertaking(pool, request.slotId, result.slot.acquiredAt);
          this.addGrant(pool, result.slot);
        } else if (result.type === "queued") {
          const waitDeadline = askedAt + request.waitMs;
          this.waiters.set(request.slotId, { pool, slotId: request.slotId, waitDeadline });
        }
      }),
    );
  }

  cancel(pool: string, slotId: string): MaybePromise<StoreCancelResult> {
    this.cancelIssued.add(slotId);
    return this.track(
      tap(this.inner.cancel(pool, slotId), (result) => {
        const waiter = this.waiters.get(slotId);
        this.waiters.delete(slotId);
        if (result.type === "cancelled" && !waiter) {
          this.violate(`cancel(${slotId}) answered cancelled for no known waiter`);
        } else if (result.type === "granted" && !this.grantedIds.has(slotId)) {
          // An async store may answer the cancel before its handoff notice arrives.
          this.addGrant(pool, result.slot);
        } else if (result.type === "unknown" && waiter && waiter.waitDeadline >= this.clock.now()) {
          this.violate(`cancel(${slotId}) answered unknown for a live waiter`);
        }
      }),
    );
  }

  renew(pool: string, slotId: string): MaybePromise<StoreRenewResult> {
    const askedAt = this.clock.now();
    const holder = this.holders.get(slotId);
    return this.track(
      tap(this.inner.renew(pool, slotId), (result) => {
        const answeredAt = this.clock.now();
        const liveFrom = holder ? liveness(holder, askedAt, answeredAt) : "dead";
        if (result.type === "renewed") {
          if (!holder || liveFrom === "dead") {
            return this.violate(`renew(${slotId}) renewed a slot not held`);
          }
          const termMs = this.configs.get(pool)?.termMs ?? Number.NaN;
          const fits = [askedAt, answeredAt].some(
            (at) => result.leaseDeadline === Math.min(at + termMs, holder.requestDeadline),
          );
          if (!fits) this.violate(`renew(${slotId}) gave lease ${result.leaseDeadline}`);
          holder.leaseDeadline = result.leaseDeadline;
        } else if (result.type === "capped") {
          if (!holder || holder.leaseDeadline < holder.requestDeadline || liveFrom === "dead") {
            this.violate(`renew(${slotId}) answered capped for a slot that can still be renewed`);
          }
        } else if (liveFrom === "live") {
          this.violate(`renew(${slotId}) answered not_found for a held slot`);
        }
      }),
    );
  }

  release(pool: string, slotId: string): MaybePromise<StoreReleaseResult> {
    const askedAt = this.clock.now();
    const holder = this.holders.get(slotId);
    // Gone before the call: the store hands the slot over within the release itself.
    this.holders.delete(slotId);
    return this.track(
      tap(this.inner.release(pool, slotId), (result) => {
        const liveFrom = holder ? liveness(holder, askedAt, this.clock.now()) : "dead";
        if ((liveFrom === "live" && !result.released) || (liveFrom === "dead" && result.released)) {
          this.violate(`release(${slotId}) answered ${result.released}, shadow says ${liveFrom}`);
        }
      }),
    );
  }

  inspect(pool: string, slotId: string): MaybePromise<StoreInspectResult | null> {
    return this.track(this.inner.inspect(pool, slotId));
  }

  setLearned(pool: string, learned: LearnedLimits): MaybePromise<void> {
    return this.track(this.inner.setLearned(pool, learned));
  }

  snapshot(pool: string): MaybePromise<PoolSnapshot | null> {
    return this.track(this.inner.snapshot(pool));
  }

  close(): MaybePromise<void> {
    return this.track(this.inner.close());
  }

  async whenIdle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await this.inner.whenIdle?.();
  }

  /** Shadow holders of a pool whose lease has not run out at `now`, in grant order. */
  liveHolders(pool: string, now: number): ShadowHolder[] {
    return [...this.holders.values()].filter((h) => h.pool === pool && h.leaseDeadline > now);
  }

  private observeHandoff(pool: string, slot: HeldSlot, queuedMs: number): void {
    const waiter = this.waiters.get(slot.slotId);
    if (!waiter && !this.cancelIssued.has(slot.slotId)) {
      this.violate(`handoff of ${slot.slotId} in ${pool}, which was not waiting`);
    }
    for (const earlier of this.waiters.values()) {
      if (earlier.slotId === slot.slotId) break;
      if (earlier.pool === pool && this.stillWaiting(earlier, slot.acquiredAt)) {
        this.violate(
          `handoff to ${slot.slotId} overtook earlier waiter ${earlier.slotId} in ${pool}`,
        );
      }
    }
    this.waiters.delete(slot.slotId);
    if (queuedMs < 0) this.violate(`negative queuedMs ${queuedMs} for ${slot.slotId}`);
    this.addGrant(pool, slot);
  }

  private observeReclaim(pool: string, slotIds: readonly string[]): void {
    for (const slotId of slotIds) {
      const holder = this.holders.get(slotId);
      if (holder && holder.leaseDeadline > this.clock.now()) {
        this.violate(`${slotId} in ${pool} reclaimed before its lease deadline`);
      }
      this.holders.delete(slotId);
      this.reclaimedIds.add(slotId);
    }
  }

  private checkNoOvertaking(pool: string, slotId: string, at: number): void {
    for (const waiter of this.waiters.values()) {
      if (waiter.pool === pool && this.stillWaiting(waiter, at)) {
        this.violate(`newcomer ${slotId} was granted while ${waiter.slotId} waited in ${pool}`);
      }
    }
  }

  /** A waiter the store must still serve before later ones: not withdrawn, wait not over. */
  private stillWaiting(waiter: ShadowWaiter, at: number): boolean {
    return !this.cancelIssued.has(waiter.slotId) && waiter.waitDeadline >= at;
  }

  private addGrant(pool: string, slot: HeldSlot): void {
    if (this.grantedIds.has(slot.slotId)) this.violate(`${slot.slotId} granted twice`);
    this.grantedIds.add(slot.slotId);
    const config = this.configs.get(pool);
    if (config) {
      const requestDeadline = slot.acquiredAt + config.requestTimeoutMs;
      const leaseDeadline = Math.min(slot.acquiredAt + config.termMs, requestDeadline);
      if (slot.requestDeadline !== requestDeadline || slot.leaseDeadline !== leaseDeadline) {
        this.violate(`grant of ${slot.slotId} has wrong deadlines: ${JSON.stringify(slot)}`);
      }
    }
    const heldAfter = this.liveHolders(pool, slot.acquiredAt).length + 1;
    if (slot.heldAtGrant !== heldAfter) {
      this.violate(
        `grant of ${slot.slotId}: heldAtGrant ${slot.heldAtGrant}, expected ${heldAfter}`,
      );
    }
    const { slotId, acquiredAt, leaseDeadline, requestDeadline } = slot;
    this.holders.set(slotId, { pool, slotId, acquiredAt, leaseDeadline, requestDeadline });
    this.grantLog.push({ pool, slotId, acquiredAt });
  }

  private track<T>(value: MaybePromise<T>): MaybePromise<T> {
    if (!(value instanceof Promise)) return value;
    this.inFlight.add(value);
    const forget = () => this.inFlight.delete(value);
    value.then(forget, forget);
    return value;
  }

  private violate(message: string): void {
    this.violations.push(`[t=${this.clock.now()}] ${message}`);
  }
}
