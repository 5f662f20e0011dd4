/**
 * The store boundary: every change to slot state (holders, waiters, RPM gate, pause,
 * learned limits) is one atomic operation here, so the in-memory reference and the Redis
 * store are interchangeable. The governor owns promises, timers for wait budgets and
 * metrics; the store owns truth.
 *
 * Methods may answer synchronously (memory) or with a promise (Redis): the governor
 * awaits only when it gets a promise, which keeps the in-memory hot path free of ticks.
 */
export type MaybePromise<T> = T | Promise<T>;

/** The limits of one pool as the store enforces them. Pushed by the governor on define/update. */
export interface StorePoolConfig {
  /** Hard concurrency ceiling (integer ≥ 1). The learned limit never exceeds it. */
  maxConcurrent: number;
  /** Waiters allowed at once (0 = no queue: every acquire is fail-fast). */
  queueSize: number;
  /** Lease term: a slot not renewed within it is reclaimed. */
  termMs: number;
  /** Hard cap on a slot's life from its grant (the contract's requestDeadline). */
  requestTimeoutMs: number;
  /** Configured requests-per-minute gate, or null for none. */
  rpm: number | null;
  /** Budget membership, or null. */
  budget: { id: string; reservedConcurrent: number } | null;
}

/** Limits learned from upstream answers; null means "nothing learned, use the configuration". */
export interface LearnedLimits {
  /** Adaptive concurrency limit (integer ≥ 1), or null. Effective limit = min(maxConcurrent, this). */
  concurrency: number | null;
  /** Learned requests-per-minute, or null. Effective gate = min(configured rpm, this). */
  rpm: number | null;
  /** Epoch ms until which new admissions are paused (Retry-After); 0 when not paused. */
  pausedUntil: number;
  /**
   * The learner's probe backoff (absent or null: none). The store only keeps it and hands it
   * back, so every process sharing the store backs off from the same failed probes.
   */
  probe?: LearnedProbe | null;
}

/** Where probes above the learned limit failed (see docs/learning.md). */
export interface LearnedProbe {
  /** The limit value whose probes failed. */
  level: number;
  /** Consecutive failed probes at `level` (≥ 1). */
  failures: number;
  /** Epoch ms of the latest failure. */
  failedAt: number;
}

/**
 * The learned limits as the store holds them, with a version that grows with every
 * `setLearned`: a process adopts what another process learned when the version is newer than
 * any it has seen.
 */
export interface SharedLearned {
  readonly version: number;
  readonly learned: LearnedLimits;
}

/** A held slot as the store records it. */
export interface HeldSlot {
  /** The slot's id, as its grant carried it. */
  slotId: string;
  /** Epoch ms of the grant. */
  acquiredAt: number;
  /** Epoch ms; the slot is reclaimed when not renewed before it. */
  leaseDeadline: number;
  /** Epoch ms; renewals never extend past it. */
  requestDeadline: number;
  /** Slots held in the pool right after this grant, this one included (feeds adaptive learning). */
  heldAtGrant: number;
  /**
   * Further slots the pool's budget left it right after this grant (its reservation and the
   * share it may still borrow, within the budget's ceiling); undefined when no budget binds,
   * and on a slot read back later rather than granted.
   */
  budgetRoom?: number | undefined;
}

/** Live figures returned with each acquire, so callers see the pool without another round trip. */
export interface PoolFigures {
  /** Slots held now. */
  held: number;
  /** Waiters queued now. */
  queued: number;
  /** Effective concurrency limit now: the configured max tightened by learning (budgets not counted). */
  limit: number;
}

/** A store's answer to an acquire: granted now, queued for a later handoff, or rejected. */
export type StoreAcquireResult =
  | { type: "granted"; slot: HeldSlot; figures: PoolFigures }
  /** Placed in the queue; the store will call {@link StoreListener.granted} when a slot is handed over. */
  | { type: "queued"; figures: PoolFigures }
  | {
      type: "rejected";
      reason: "concurrency" | "queue_full" | "rpm" | "paused" | "budget";
      /** Best estimate of when a retry may succeed, or null when the store cannot tell. */
      retryAfterMs: number | null;
      figures: PoolFigures;
    };

/** What the governor asks a store for in {@link SlotStore.acquire}. */
export interface StoreAcquireRequest {
  /** Unguessable id, chosen by the governor; becomes the slot's id when granted, now or later. */
  slotId: string;
  /**
   * How long the caller may wait in the queue (ms, already clamped to the pool's queue
   * timeout). 0 = fail fast. A waiter whose only obstacle is the RPM gate or a pause is
   * queued when its turn falls within this budget, else rejected with the time to its turn.
   */
  waitMs: number;
  /**
   * Opaque: a store that sets {@link SlotStore.returnsWaiters} hands it back with this
   * waiter's handoff ({@link StoreListener.granted}), so the governor finds its caller without
   * a lookup by slot id. Other stores ignore it.
   */
  waiter?: unknown;
  /**
   * A reading of this store's own clock taken just before the call, by a caller that shares
   * the clock (a governor over the memory store): the store uses it instead of reading again.
   * Stores with a clock of their own (Redis) ignore it.
   */
  now?: number;
}

/** A store's answer to a renew: the new lease deadline, the request-timeout cap, or no such slot. */
export type StoreRenewResult =
  | { type: "renewed"; leaseDeadline: number }
  | { type: "capped"; requestDeadline: number }
  | { type: "not_found" };

/** A store's answer to a release. */
export interface StoreReleaseResult {
  /** True when the slot was held; false when it was already released or reclaimed. */
  released: boolean;
  /** The slot as it was held (for hold-time metrics and learning); absent when not released. */
  slot?: HeldSlot;
  /**
   * The store's clock at the release (epoch ms), when the store can tell at no cost (memory).
   * Hold time is then measured on one clock, the store's: `releasedAt − slot.acquiredAt`.
   */
  releasedAt?: number;
  /** Slots held just before the release (the released one included), when the store tells. */
  held?: number;
  /** Waiters queued just before the release handed the slot on, when the store tells. */
  queued?: number;
  /** The pool's learned limits as the store holds them, when the store tells. */
  shared?: SharedLearned;
}

/**
 * A held slot as the store has it, with the pool's figures, read without changing the slot:
 * what the governor learns from before a release whose outcome tightens the limits.
 */
export interface StoreInspectResult {
  slot: HeldSlot;
  /** Slots held now, this one included. */
  held: number;
  /** Waiters queued now. */
  queued: number;
  /** The pool's learned limits as the store holds them, when the store tells. */
  shared?: SharedLearned;
}

/** A store's answer when a waiter leaves the queue (abort, timeout) while a handoff may race it. */
export type StoreCancelResult =
  /** The waiter left the queue. */
  | { type: "cancelled" }
  /** Too late: the slot was handed over already. The caller now holds it. */
  | { type: "granted"; slot: HeldSlot }
  /** The store knows nothing of this waiter (pool removed, or the store lost it). */
  | { type: "unknown" };

/** What the store tells the governor on its own initiative. */
export interface StoreListener {
  /**
   * A queued waiter was handed a slot (by a release, a reclaim, an RPM turn, a limit change).
   * `waiter` is the request's {@link StoreAcquireRequest.waiter} when the store returns waiters.
   */
  granted(pool: string, slot: HeldSlot, queuedMs: number, waiter?: unknown): void;
  /** Slots whose lease ran out were reclaimed. */
  reclaimed(pool: string, slotIds: readonly string[]): void;
  /**
   * Another process sharing the store removed the pool while this one had waiters or slots in
   * it (a store shared by processes only): they are gone, nothing is left to wait for or renew.
   */
  removed?(pool: string): void;
}

/** A point-in-time view of a pool, for status output and tests. */
export interface PoolSnapshot extends PoolFigures {
  /** What the pool learned from its upstream (limits, pause, probe backoff). */
  learned: LearnedLimits;
  /** Slot ids held now, in grant order. */
  slotIds: string[];
  /** Queued waiter ids, head first. */
  waiterIds: string[];
}

/**
 * The atomic slot engine behind a governor. The in-memory store is the reference; every
 * implementation passes the same conformance suite (`test/store-conformance/`).
 */
export interface SlotStore {
  /** Short name for logs and status output ("memory", "redis"). */
  readonly kind: string;
  /**
   * True when every handoff hands back the acquire request's `waiter` (in-process stores):
   * the governor then keeps no index of its waiters by slot id.
   */
  readonly returnsWaiters?: boolean;
  /** The store's clock, in epoch ms (Redis: server TIME). Leases and gates use only this. */
  now(): MaybePromise<number>;
  /** Called once by the governor before any other call. */
  setListener(listener: StoreListener): void;
  /** Defines or updates a budget. A null origin means "no shared ceiling". */
  upsertBudget(budget: string, originMaxConcurrent: number | null): MaybePromise<void>;
  /** Forgets a budget (the governor only removes one no pool names any more). */
  removeBudget(budget: string): MaybePromise<void>;
  /** Defines or updates a pool. Held slots and waiters survive; a raised limit serves waiters at once. */
  upsertPool(pool: string, config: StorePoolConfig): MaybePromise<void>;
  /** Forgets a pool: its slots and waiters are dropped (later releases answer released:false). */
  removePool(pool: string): MaybePromise<void>;
  /**
   * One atomic admission: grants a slot, queues the request (with a `waiter` and a wait
   * budget) or rejects it with the reason and a retry hint.
   */
  acquire(pool: string, request: StoreAcquireRequest): MaybePromise<StoreAcquireResult>;
  /** Withdraws a waiter (timeout, abort). */
  cancel(pool: string, slotId: string): MaybePromise<StoreCancelResult>;
  /** Extends a held slot's lease by one term, never past its request deadline. */
  renew(pool: string, slotId: string): MaybePromise<StoreRenewResult>;
  /**
   * The slot as held and the pool's figures, or null when the slot is not held (released, or
   * its lease ran out). Changes no slot; a store may reclaim run-out leases on the way.
   */
  inspect(pool: string, slotId: string): MaybePromise<StoreInspectResult | null>;
  /** Idempotent. Frees the slot and hands it to the next eligible waiter in the same operation. */
  release(pool: string, slotId: string): MaybePromise<StoreReleaseResult>;
  /**
   * Replaces the learned limits of a pool (a tighter limit never revokes held slots) and
   * moves their version on; `probe` is kept as given.
   */
  setLearned(pool: string, learned: LearnedLimits): MaybePromise<void>;
  /** The pool as the store holds it now (slots, waiters, learned limits); null when unknown. */
  snapshot(pool: string): MaybePromise<PoolSnapshot | null>;
  /** Stops timers and connections. Pending waiters are left to the governor. */
  close(): MaybePromise<void>;
  /**
   * Test hook: resolves when no store-initiated work (timer-driven reclaim or serving of
   * waiters) is in flight. The memory store is always idle; the Redis store awaits its scripts.
   */
  whenIdle?(): Promise<void>;
}
