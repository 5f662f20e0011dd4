import { afterEach, beforeEach, expect } from "vitest";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import type {
  HeldSlot,
  LearnedLimits,
  PoolSnapshot,
  SlotStore,
  StoreAcquireResult,
  StoreListener,
  StorePoolConfig,
} from "../../src/store/types.js";

/**
 * What a store implementation hands the conformance suites: a fresh, empty store wired to the
 * returned ManualClock. `cleanup` runs after each test (and after a governor may already have
 * closed the store), so it must tolerate a closed store.
 *
 * @example
 * ```ts
 * const makeHarness = async (): Promise<StoreHarness> => {
 *   const clock = new ManualClock();
 *   return { store: new MemorySlotStore({ clock }), clock, cleanup: async () => {} };
 * };
 * ```
 */
export interface StoreHarness {
  store: SlotStore;
  clock: ManualClock;
  cleanup(): Promise<void>;
}

/** One `listener.granted` call as the store made it. */
export interface RecordedGrant {
  pool: string;
  slot: HeldSlot;
  queuedMs: number;
}

/** One `listener.reclaimed` call as the store made it. */
export interface RecordedReclaim {
  pool: string;
  slotIds: string[];
}

/** A listener that remembers every call, in order, for assertions. */
export class RecordingListener implements StoreListener {
  readonly grants: RecordedGrant[] = [];
  readonly reclaims: RecordedReclaim[] = [];

  granted(pool: string, slot: HeldSlot, queuedMs: number): void {
    this.grants.push({ pool, slot: { ...slot }, queuedMs });
  }

  reclaimed(pool: string, slotIds: readonly string[]): void {
    this.reclaims.push({ pool, slotIds: [...slotIds] });
  }

  /** Slot ids handed to waiters, in handoff order. */
  grantedIds(pool?: string): string[] {
    return this.grants
      .filter((g) => pool === undefined || g.pool === pool)
      .map((g) => g.slot.slotId);
  }

  /** Slot ids reported reclaimed, flattened, in report order. */
  reclaimedIds(pool?: string): string[] {
    return this.reclaims
      .filter((r) => pool === undefined || r.pool === pool)
      .flatMap((r) => r.slotIds);
  }
}

/** Defaults that keep each test's intent visible: only what a test overrides matters to it. */
export const BASE_POOL: StorePoolConfig = {
  maxConcurrent: 1,
  queueSize: 10,
  termMs: 10_000,
  requestTimeoutMs: 60_000,
  rpm: null,
  budget: null,
};

/** Learned limits of a pool that has learned nothing. */
export const NOTHING_LEARNED: LearnedLimits = { concurrency: null, rpm: null, pausedUntil: 0 };
/** What a pool's releases and inspections report as learned before anything was. */
export const NOTHING_SHARED = { version: 0, learned: NOTHING_LEARNED };

/** The per-test view of a harness plus terse helpers for the store operations. */
export class StoreFixture {
  readonly events = new RecordingListener();

  constructor(readonly harness: StoreHarness) {
    harness.store.setListener(this.events);
  }

  get store(): SlotStore {
    return this.harness.store;
  }

  now(): number {
    return this.harness.clock.now();
  }

  async definePool(pool: string, overrides: Partial<StorePoolConfig> = {}): Promise<void> {
    await this.store.upsertPool(pool, { ...BASE_POOL, ...overrides });
  }

  acquire(pool: string, slotId: string, waitMs = 0): Promise<StoreAcquireResult> {
    return Promise.resolve(this.store.acquire(pool, { slotId, waitMs }));
  }

  /** Acquires and insists on an immediate grant; returns the slot. */
  async grant(pool: string, slotId: string): Promise<HeldSlot> {
    const result = await this.acquire(pool, slotId);
    if (result.type !== "granted") {
      throw new Error(`expected ${slotId} to be granted in ${pool}, got ${JSON.stringify(result)}`);
    }
    return result.slot;
  }

  /** Acquires with a wait and insists on being queued. */
  async enqueue(pool: string, slotId: string, waitMs = 600_000): Promise<void> {
    const result = await this.acquire(pool, slotId, waitMs);
    expect(result.type, `${slotId} should be queued: ${JSON.stringify(result)}`).toBe("queued");
  }

  async release(pool: string, slotId: string): Promise<void> {
    const result = await this.store.release(pool, slotId);
    expect(result.released, `${slotId} should have been held`).toBe(true);
  }

  async setLearned(pool: string, learned: Partial<LearnedLimits>): Promise<void> {
    await this.store.setLearned(pool, { ...NOTHING_LEARNED, ...learned });
  }

  /** Moves time and waits until the store has finished the timer work it triggered. */
  async advance(ms: number): Promise<void> {
    await this.harness.clock.advance(ms);
    await this.store.whenIdle?.();
  }

  async snapshot(pool: string): Promise<PoolSnapshot> {
    const snapshot = await this.store.snapshot(pool);
    if (!snapshot) throw new Error(`pool ${pool} has no snapshot`);
    return snapshot;
  }
}

/**
 * Registers beforeEach/afterEach hooks in the calling describe block and returns an accessor
 * for the current test's fixture.
 */
export function useStoreFixture(makeHarness: () => Promise<StoreHarness>): () => StoreFixture {
  let fixture: StoreFixture | undefined;
  beforeEach(async () => {
    fixture = new StoreFixture(await makeHarness());
  });
  afterEach(async () => {
    const current = fixture;
    fixture = undefined;
    await current?.harness.cleanup();
  });
  return () => {
    if (!fixture) throw new Error("store fixture used outside a test");
    return fixture;
  };
}
