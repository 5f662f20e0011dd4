import type { Clock } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import {
  AbortedError,
  GovernorClosedError,
  InvalidArgumentError,
  PoolNotFoundError,
  RejectedError,
  SlotCappedError,
  SlotNotFoundError,
} from "../errors.js";
import type { OutcomeReport } from "../learning/types.js";
import { MetricsRecorder } from "../metrics/recorder.js";
import { MemorySlotStore } from "../store/memory-store.js";
import type {
  HeldSlot,
  MaybePromise,
  SlotStore,
  StoreAcquireRequest,
  StoreAcquireResult,
} from "../store/types.js";
import { checkGovernorOptions, checkSlotId } from "./argument-checks.js";
import type { RunFn } from "./caller.js";
import { Caller } from "./caller.js";
import { fetchWithinHold } from "./governed-fetch.js";
import { noteFigures, toGrant, waitBudget } from "./grants.js";
import { Holds } from "./holds.js";
import type { HoldOwner, LocalHold } from "./local-hold.js";
import { pushLearned, resetLearning } from "./pool-learning.js";
import type { PoolEntry } from "./pool-registry.js";
import { PoolRegistry, toPoolStatus, toStoreConfig } from "./pool-registry.js";
import {
  learnWhileHeld,
  NOT_RELEASED,
  type ReleaseAnswer,
  type ReleaseDeps,
  releaseAndLearn,
} from "./release-flow.js";
import { ignore, releaseQuietly } from "./release-quietly.js";
import { RunStarter, startHold } from "./run-starter.js";
import type { BudgetSettings, PoolSettings, PoolSettingsInput } from "./settings.js";
import { BudgetSettingsSchema, parseOrThrow, parsePoolSettings } from "./settings.js";
import { newSlotId } from "./slot-id.js";
import { StoreEvents } from "./store-events.js";
import type {
  AcquireOptions,
  Governor,
  GovernorOptions,
  PoolStatus,
  RunContext,
  SlotGrant,
} from "./types.js";
import type { GrantDelivery } from "./waiting-room.js";
import { WaitingRoom } from "./waiting-room.js";

/** Retry hint for turn-aways caused by busy slots, where no deadline is known. */
const SLOT_RETRY_HINT_MS = 1000;
const NO_OPTIONS: AcquireOptions = Object.freeze({});

/**
 * Creates a governor: pools with exact concurrency, FIFO queues, RPM gates and budgets,
 * learning from upstream answers. In-memory by default; pass a Redis store to share limits
 * across processes.
 *
 * @example
 * ```ts
 * const governor = createGovernor();
 * await governor.definePool("openai", { maxConcurrent: 8, rpm: 500, queue: { size: 100, timeoutMs: 30_000 } });
 * const answer = await governor.run("openai", () => callTheApi(), { waitMs: 10_000 });
 * ```
 */
export function createGovernor(options: GovernorOptions = {}): Governor {
  return new SluiceGovernor(options);
}

class SluiceGovernor implements Governor, HoldOwner, GrantDelivery, ReleaseDeps {
  readonly clock: Clock;
  readonly store: SlotStore;
  readonly metrics: MetricsRecorder;
  private readonly registry: PoolRegistry;
  private readonly room: WaitingRoom;
  private readonly holds: Holds;
  private readonly runs: RunStarter;
  /** The store reads this governor's clock: its reading at a release serves both. */
  readonly sharesClock: boolean;
  /** The one acquire request handed to a memory store (see {@link askStore}); else null. */
  private readonly reusedRequest: StoreAcquireRequest | null;
  private closed = false;
  /** drain() was called: no new admissions, held slots live on until close(). */
  private draining = false;
  /** The caller that {@link admitNow} is admitting, and its promise executor's `reject`. */
  private admitting: Caller | undefined;
  private admittingReject: ((error: unknown) => void) | undefined;

  constructor(input: GovernorOptions) {
    const options = checkGovernorOptions(input);
    this.clock = options.clock ?? systemClock;
    this.store = options.store ?? new MemorySlotStore({ clock: this.clock });
    this.metrics = options.metrics ?? new MetricsRecorder();
    this.registry = new PoolRegistry(this.metrics);
    this.sharesClock = this.store instanceof MemorySlotStore && this.store.clock === this.clock;
    // `now` holds what it will hold from the start (a double, or always undefined): a field
    // whose kind of value changes would change the object's hidden class.
    this.reusedRequest =
      this.store instanceof MemorySlotStore
        ? {
            slotId: "",
            waitMs: 0,
            waiter: undefined,
            now: this.sharesClock ? Number.NaN : undefined,
          }
        : null;
    this.holds = new Holds(this.clock, this.store);
    this.runs = new RunStarter(this.holds, this, (caller) => this.runRefusal(caller));
    this.room = new WaitingRoom(this.clock, this.store, this);
    this.store.setListener(
      new StoreEvents(this.room, this.holds, (pool) => this.removedElsewhere(pool)),
    );
  }

  async definePool(pool: string, input: PoolSettingsInput): Promise<PoolSettings> {
    this.ensureOpen();
    const settings = parsePoolSettings(input);
    this.registry.checkPool(pool, settings);
    // The entry first: the store may hand slots to waiters while it applies the new limits.
    const entry = this.registry.upsert(pool, settings);
    await this.store.upsertPool(pool, toStoreConfig(settings));
    await pushLearned(this.store, entry);
    return settings;
  }

  async removePool(pool: string): Promise<void> {
    this.ensureOpen();
    const entry = this.registry.pools.get(pool);
    if (!entry) return;
    this.registry.pools.delete(pool);
    this.stopPoolWork(pool, entry);
    await this.store.removePool(pool);
  }

  /**
   * Another process sharing the store removed the pool: the waiters and slots this one had in
   * it are gone. Its definition here stays (the store brings the pool back with the next
   * acquire, as after a lost store), so a process that still defines the pool keeps serving it.
   */
  private removedElsewhere(pool: string): void {
    const entry = this.registry.pools.get(pool);
    if (entry) this.stopPoolWork(pool, entry);
  }

  /** The pool's waiters and the work holding its slots get `PoolNotFoundError` now. */
  private stopPoolWork(pool: string, entry: PoolEntry): void {
    const removed = poolRemoved(pool);
    this.room.rejectAll(() => removed, entry);
    // Work holding its slots stops now, rather than at its next renewal ("not found").
    this.holds.stopPool(pool, removed);
  }

  async defineBudget(budget: string, input: BudgetSettings): Promise<void> {
    this.ensureOpen();
    const settings = Object.freeze(parseOrThrow(BudgetSettingsSchema, input, "budget settings"));
    this.registry.checkBudget(budget, settings);
    await this.store.upsertBudget(budget, settings.originMaxConcurrent);
    this.registry.budgets.set(budget, settings);
  }

  async removeBudget(budget: string): Promise<void> {
    this.ensureOpen();
    if (this.registry.membersOf(budget).length > 0) {
      throw new InvalidArgumentError(
        `Budget "${budget}" still has pools; move or remove them first.`,
      );
    }
    this.registry.budgets.delete(budget);
    await this.store.removeBudget(budget);
  }

  poolSettings(pool: string): PoolSettings | undefined {
    return this.registry.pools.get(pool)?.settings;
  }

  pools(): string[] {
    return [...this.registry.pools.keys()];
  }

  acquire(pool: string, options?: AcquireOptions): Promise<SlotGrant> {
    return new Promise<SlotGrant>((resolve, reject) => {
      const opts = options ?? NO_OPTIONS;
      this.admitNow(pool, opts, new Caller(resolve, undefined, opts.signal ?? undefined), reject);
    });
  }

  /**
   * {@link admit} inside the caller's promise executor: a failure known before `admit` returns
   * (bad input, a turn-away by a synchronous store) rejects through the executor's `reject`,
   * at once and without the rejected promise that {@link Caller.failed} needs later on.
   */
  private admitNow(
    pool: string,
    options: AcquireOptions,
    caller: Caller,
    reject: (error: unknown) => void,
  ): void {
    const outerCaller = this.admitting;
    const outerReject = this.admittingReject;
    this.admitting = caller;
    this.admittingReject = reject;
    try {
      this.admit(pool, options, caller);
    } finally {
      this.admitting = outerCaller;
      this.admittingReject = outerReject;
    }
  }

  /** Fails a caller: through its executor's `reject` while it is being admitted. */
  private fail(caller: Caller, error: unknown): void {
    if (this.admitting === caller) this.admittingReject!(error);
    else caller.failed(error);
  }

  /**
   * Asks the store for a slot on behalf of `caller` and settles it: granted at once, turned
   * away, or queued in the waiting room until a handoff, its timeout or its abort. Never throws.
   */
  private admit(pool: string, options: AcquireOptions, caller: Caller): void {
    try {
      if (this.draining) throw new GovernorClosedError(!this.closed);
      const entry = this.registry.get(pool);
      const waitMs = waitBudget(entry.settings, options);
      if (options.signal?.aborted) throw new AbortedError(options.signal.reason);
      const now = this.clock.now();
      entry.meter.request(now);
      caller.entry = entry;
      caller.slotId = newSlotId();
      caller.waitMs = waitMs;
      caller.enqueuedAt = now;
      const answer = this.askStore(pool, caller, now);
      if (answer instanceof Promise) {
        answer.then(
          (result) => {
            try {
              this.afterAcquire(caller, result);
            } catch (error) {
              this.fail(caller, error);
            }
          },
          (error: unknown) => this.fail(caller, error),
        );
      } else {
        this.afterAcquire(caller, answer);
      }
    } catch (error) {
      this.fail(caller, error);
    }
  }

  /**
   * The store's `acquire` for `caller`. The memory store reads the request before it answers
   * and keeps nothing of it (nor calls back into `admit` meanwhile), so one request object
   * serves every acquire, emptied of the caller after; other stores get a fresh one each time.
   */
  private askStore(pool: string, caller: Caller, now: number): MaybePromise<StoreAcquireResult> {
    const reused = this.reusedRequest;
    if (reused === null) {
      const request = { slotId: caller.slotId, waitMs: caller.waitMs, waiter: caller };
      return this.store.acquire(pool, request);
    }
    reused.slotId = caller.slotId;
    reused.waitMs = caller.waitMs;
    reused.waiter = caller;
    reused.now = this.sharesClock ? now : undefined;
    try {
      return this.store.acquire(pool, reused);
    } finally {
      reused.waiter = undefined;
    }
  }

  private afterAcquire(caller: Caller, result: StoreAcquireResult): void {
    const entry = caller.entry!;
    noteFigures(entry, result.figures);
    if (result.type === "granted") {
      if (caller.signal?.aborted) {
        // Aborted while the store was answering: nobody takes the slot, it goes straight back.
        releaseQuietly(this.store, entry.name, caller.slotId);
        this.fail(caller, new AbortedError(caller.signal.reason));
        return;
      }
      entry.meter.admitted(caller.enqueuedAt, 0);
      this.deliver(caller, result.slot, 0);
    } else if (result.type === "rejected") {
      entry.meter.rejected(caller.enqueuedAt);
      this.fail(
        caller,
        new RejectedError(
          result.reason,
          result.retryAfterMs ?? SLOT_RETRY_HINT_MS,
          result.figures.limit,
        ),
      );
    } else {
      entry.meter.queued(caller.enqueuedAt);
      this.room.wait(caller);
      // drain() or close() came while the store was answering: it refuses waiters.
      if (this.draining) this.room.turnAway(caller, new GovernorClosedError(!this.closed));
    }
  }

  async renew(pool: string, slotId: string): Promise<{ leaseDeadline: number }> {
    this.ensureOpen();
    checkSlotId(slotId);
    this.registry.get(pool);
    const result = await this.store.renew(pool, slotId);
    if (result.type === "renewed") return { leaseDeadline: result.leaseDeadline };
    if (result.type === "capped") throw new SlotCappedError(result.requestDeadline);
    throw new SlotNotFoundError(slotId);
  }

  async release(
    pool: string,
    slotId: string,
    outcome?: OutcomeReport,
  ): Promise<{ released: boolean }> {
    checkSlotId(slotId);
    return this.releaseNow(pool, slotId, outcome);
  }

  /** Release without a promise layer of its own when the store answers synchronously. */
  private releaseNow(
    pool: string,
    slotId: string,
    outcome: OutcomeReport | undefined,
  ): MaybePromise<ReleaseAnswer> {
    const entry = this.registry.pools.get(pool);
    // Release is the cleanup path: it answers, it never throws for a missing pool or slot.
    if (!entry) return NOT_RELEASED;
    return releaseAndLearn(this, entry, slotId, outcome);
  }

  run<T>(
    pool: string,
    fn: (context: RunContext) => T | Promise<T>,
    options?: AcquireOptions,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (typeof fn !== "function") {
        reject(new InvalidArgumentError(`run() needs a function to run, got ${typeof fn}.`));
        return;
      }
      const opts = options ?? NO_OPTIONS;
      this.admitNow(pool, opts, new Caller(resolve, fn as RunFn, opts.signal ?? undefined), reject);
    });
  }

  /** The caller holds a slot now: an `acquire()` resolves, a `run()` starts (see {@link RunStarter}). */
  deliver(caller: Caller, slot: HeldSlot, queuedMs: number): void {
    if (caller.fn !== undefined) this.runs.start(caller, slot, queuedMs);
    else (caller.resolve as (value: SlotGrant) => void)(toGrant(caller.entry!, slot, queuedMs));
  }

  async fetch(
    pool: string,
    input: string | URL | Request,
    init: RequestInit & AcquireOptions = {},
  ): Promise<Response> {
    const { waitMs, noQueue, signal, ...requestInit } = init;
    // A Request carries its own signal; `init.signal` wins, as with fetch().
    const callerSignal = signal ?? (input instanceof Request ? input.signal : undefined);
    const options = { waitMs, noQueue, signal: callerSignal };
    const grant = await this.acquire(pool, options);
    const hold = startHold(this.holds, this, pool, grant, options.signal, this.clock.now());
    return fetchWithinHold(hold, input, requestInit);
  }

  async status(pool: string): Promise<PoolStatus> {
    const entry = this.registry.get(pool);
    const snapshot = await this.store.snapshot(pool);
    return toPoolStatus(entry, snapshot, this.clock.now());
  }

  async resetLearned(pool: string): Promise<void> {
    this.ensureOpen();
    await resetLearning(this.store, this.registry.get(pool));
  }

  drain(): void {
    if (this.draining) return;
    this.draining = true;
    this.room.rejectAll(() => new GovernorClosedError(!this.closed));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.drain();
    this.holds.stop(new GovernorClosedError());
    await this.store.close();
  }

  private ensureOpen(): void {
    if (this.closed) throw new GovernorClosedError();
  }

  /**
   * Why a `run()` caller granted a moment ago must not start: the governor closed, or its pool
   * was removed (maybe re-defined: a new entry) since the grant.
   */
  private runRefusal(caller: Caller): Error | undefined {
    if (this.closed) return new GovernorClosedError();
    const entry = caller.entry!;
    if (this.registry.pools.get(entry.name) !== entry) return poolRemoved(entry.name);
    return undefined;
  }

  learnFromHeld(hold: LocalHold, outcome: OutcomeReport): MaybePromise<void> {
    const entry = this.registry.pools.get(hold.pool);
    if (!entry) return;
    try {
      const learned = learnWhileHeld(this, entry, hold.slotId, outcome);
      // Learning is advice: a store that cannot take it now leaves the limits as they were.
      if (learned instanceof Promise) return learned.then(ignore, ignore);
    } catch {
      // The same, when the store fails at once.
    }
  }

  finishHold(hold: LocalHold): MaybePromise<void> {
    this.holds.untrack(hold);
    let answer: MaybePromise<unknown>;
    try {
      answer = this.releaseNow(hold.pool, hold.slotId, hold.outcome);
    } catch {
      // The store is unreachable: the lease frees the slot within one term.
      return;
    }
    // A failed release is left to the lease too.
    if (answer instanceof Promise) return answer.then(ignore, ignore);
  }
}

/** What the work and waiters of a pool removed under them hear. */
function poolRemoved(pool: string): PoolNotFoundError {
  return new PoolNotFoundError(pool, `Pool "${pool}" was removed.`);
}
