import type { Clock } from "../clock/clock.js";
import type { LearnerStatus } from "../learning/learner-status.js";
import type { OutcomeReport } from "../learning/types.js";
import type { MetricsRecorder } from "../metrics/recorder.js";
import type { LearnedLimits, SlotStore } from "../store/types.js";
import type { BudgetSettings, PoolSettings, PoolSettingsInput } from "./settings.js";

/**
 * Options of {@link createGovernor}.
 *
 * @example
 * ```ts
 * const clock = new ManualClock();
 * const governor = createGovernor({ clock, store: new MemorySlotStore({ clock }) });
 * ```
 */
export interface GovernorOptions {
  /** Slot store; the in-memory store by default. */
  store?: SlotStore;
  /** Time source; the system clock by default. */
  clock?: Clock;
  /** Metrics recorder; a fresh in-memory one by default. */
  metrics?: MetricsRecorder;
}

/**
 * Options of one acquire.
 *
 * @example
 * ```ts
 * await governor.acquire("llm", { waitMs: 2_000, signal: AbortSignal.timeout(5_000) });
 * ```
 */
export interface AcquireOptions {
  /** Opt-in queue wait in ms (integer ≥ 0), clamped to the pool's queue timeout. Absent or 0: fail fast. */
  waitMs?: number;
  /** Forces fail-fast even when `waitMs` is set. */
  noQueue?: boolean;
  /**
   * Aborting leaves the queue at once with an `AbortedError`. `null` (as `RequestInit` allows,
   * so `fetch(pool, url, { ...init, waitMs })` type-checks) means none.
   */
  signal?: AbortSignal | null;
}

/**
 * A granted slot: the contract's lock grant plus live figures.
 *
 * @example
 * ```ts
 * const { slotId, leaseDeadline, renewIntervalMs, remainingSlots } = await governor.acquire("llm");
 * ```
 */
export interface SlotGrant {
  /** The slot's id, for `renew` and `release`. */
  slotId: string;
  /** Epoch ms: renew before this. */
  leaseDeadline: number;
  /** Epoch ms: renewal never extends past it. */
  requestDeadline: number;
  /** The lease term: each renewal extends the lease to now + `termMs`. */
  termMs: number;
  /** How often to renew (at most half of `termMs`). */
  renewIntervalMs: number;
  /**
   * Slots still free to the pool right after this grant: below its effective limit and,
   * in a budget, within what the budget leaves it (reservation plus borrowable share). A grant
   * the Redis store recovers after its handoff message was lost counts the pool alone.
   */
  remainingSlots: number;
  /** The pool's effective concurrency limit (configured max tightened by learning). */
  effectiveLimit: number;
  /** Time spent in the queue (0 when admitted at once). */
  queuedMs: number;
}

/**
 * Passed to the function given to {@link Governor.run}.
 *
 * @example
 * ```ts
 * await governor.run("llm", async ({ signal, report }) => {
 *   const response = await fetch(url, { signal });
 *   report({ status: response.status, headers: response.headers });
 * });
 * ```
 */
export interface RunContext {
  /** The slot `fn` runs in. */
  readonly grant: SlotGrant;
  /**
   * Aborts when the caller's signal aborts, the slot reaches its request deadline or is lost,
   * or the governor closes (or the pool is removed). Made when first read.
   */
  readonly signal: AbortSignal;
  /**
   * Calls `listener` once, with the reason, at the moments `signal` aborts (at once when it
   * already has); answers the unsubscribe. For work that only needs the callback: it costs no
   * AbortSignal.
   */
  onAbort(listener: (reason: unknown) => void): () => void;
  /** Attach an upstream outcome to the release that follows `fn` (last call wins). */
  report(outcome: OutcomeReport): void;
}

/**
 * Live view of a pool, learned limits included.
 *
 * @example
 * ```ts
 * const { held, queued, effectiveLimit, learned, learner } = await governor.status("llm");
 * console.log(`next probe to ${learner.nextProbeLevel} in ${learner.nextProbeInMs} ms`);
 * ```
 */
export interface PoolStatus {
  /** The pool's name. */
  pool: string;
  /** Its settings, defaults filled in. */
  settings: PoolSettings;
  /** Slots held now (by every process sharing the store). */
  held: number;
  /** Callers waiting in its queue. */
  queued: number;
  /** `maxConcurrent` tightened by the learned concurrency limit. */
  effectiveLimit: number;
  /** The learned concurrency limit and RPM, and until when admissions are paused (epoch ms, 0: not paused). */
  learned: LearnedLimits;
  /**
   * The pool's learner as the store has it (processes sharing a store share it): the limit
   * it learned, when it next probes above it and how often probes failed there (see
   * docs/learning.md). For a dashboard's pool page.
   */
  learner: LearnerStatus;
}

/**
 * The admission engine. One governor serves many pools; every method is safe to call
 * concurrently.
 *
 * @example
 * ```ts
 * const governor = createGovernor();
 * await governor.definePool("llm", { maxConcurrent: 4, queue: { size: 50, timeoutMs: 10_000 } });
 * const grant = await governor.acquire("llm", { waitMs: 5_000 });
 * try { await callUpstream(); } finally { await governor.release("llm", grant.slotId, { status: 200 }); }
 * ```
 */
export interface Governor {
  /** The clock of leases, queue deadlines and RPM turns (the `clock` option, else the system's). */
  readonly clock: Clock;
  /** Where the slot state lives (the `store` option, else a `MemorySlotStore` of its own). */
  readonly store: SlotStore;
  /** Per-pool counters in per-minute buckets (the `metrics` option, else a recorder of its own). */
  readonly metrics: MetricsRecorder;
  /** Defines a pool, or updates it in place (held slots are kept; new limits apply at once). */
  definePool(pool: string, settings: PoolSettingsInput): Promise<PoolSettings>;
  /** Removes a pool. Its waiters are rejected with `PoolNotFoundError`; later releases answer false. */
  removePool(pool: string): Promise<void>;
  /** Defines or updates a budget. Pools join it through their `budget` setting. */
  defineBudget(budget: string, settings: BudgetSettings): Promise<void>;
  /** Removes a budget; throws `InvalidArgumentError` while pools still name it. */
  removeBudget(budget: string): Promise<void>;
  /** The settings a pool was defined with (defaults filled in); undefined for an unknown pool. */
  poolSettings(pool: string): PoolSettings | undefined;
  /** The names of the pools this governor defined. */
  pools(): string[];
  /**
   * Takes a slot: at once, or after queueing when `waitMs` allows. Throws `RejectedError`
   * (no slot, no queue place), `QueueTimeoutError`, `AbortedError`, `PoolNotFoundError` or
   * `GovernorClosedError`. Renew the grant every `renewIntervalMs` and always release it.
   */
  acquire(pool: string, options?: AcquireOptions): Promise<SlotGrant>;
  /** Extends the lease; throws `SlotNotFoundError` or `SlotCappedError`. */
  renew(pool: string, slotId: string): Promise<{ leaseDeadline: number }>;
  /** Idempotent release; the outcome feeds learning. */
  release(pool: string, slotId: string, outcome?: OutcomeReport): Promise<{ released: boolean }>;
  /** Acquire, run `fn`, release (also when `fn` throws or the signal aborts). */
  run<T>(
    pool: string,
    fn: (context: RunContext) => T | Promise<T>,
    options?: AcquireOptions,
  ): Promise<T>;
  /** A governed `fetch`: holds a slot for the whole exchange and learns from the response by itself. */
  fetch(
    pool: string,
    input: string | URL | Request,
    init?: RequestInit & AcquireOptions,
  ): Promise<Response>;
  /** Slots held and waiters queued, the effective limit and what was learned; `PoolNotFoundError` for an unknown pool. */
  status(pool: string): Promise<PoolStatus>;
  /** Forgets what was learned for a pool (limits return to the configuration). */
  resetLearned(pool: string): Promise<void>;
  /**
   * Stops admitting, for a graceful shutdown: waiters and every later acquire, `run()` and
   * `fetch()` are refused with `GovernorClosedError`, while slots already held keep their
   * leases (renew and release work) so work in flight can finish. `close()` follows.
   */
  drain(): void;
  /**
   * Rejects all waiters, aborts the `signal` of `run()`/`fetch()` work still holding slots
   * (their leases are no longer renewed), stops timers and closes the store. Every later call
   * but `release` and the read-only ones throws `GovernorClosedError`.
   */
  close(): Promise<void>;
}
