import { BudgetNotFoundError, InvalidArgumentError, PoolNotFoundError } from "../errors.js";
import type { LearnerState } from "../learning/learner.js";
import { initialLearnerState, withoutConcurrency } from "../learning/learner.js";
import { learnerStatus } from "../learning/learner-status.js";
import { adoptShared, sameLearned } from "../learning/shared-learning.js";
import type { PoolMeter } from "../metrics/pool-meter.js";
import type { MetricsRecorder } from "../metrics/recorder.js";
import type { LearnedLimits, PoolSnapshot, StorePoolConfig } from "../store/types.js";
import type { BudgetSettings, PoolSettings } from "./settings.js";
import type { PoolStatus } from "./types.js";

/** What the governor keeps about one pool in this process. */
export interface PoolEntry {
  readonly name: string;
  settings: PoolSettings;
  readonly meter: PoolMeter;
  learner: LearnerState;
  /** The learned limits last written to (or adopted from) the store: writes that change nothing are skipped. */
  learnedInStore: LearnedLimits;
  /** Version of the store's learned limits this process saw last (-1: none yet). */
  sharedVersion: number;
  /** Figures from the store's latest answer: the pool as this process last saw it. */
  held: number;
  queued: number;
  limit: number;
}

export const NOTHING_LEARNED: LearnedLimits = Object.freeze({
  concurrency: null,
  rpm: null,
  pausedUntil: 0,
});

const POOL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * Pool and budget definitions of one governor, with the cross-checks a single pool's schema
 * cannot make (a budget must exist; reservations must fit the budget's ceiling).
 *
 * @example
 * ```ts
 * const registry = new PoolRegistry(metrics);
 * registry.checkPool("llm", settings);
 * ```
 */
export class PoolRegistry {
  readonly pools = new Map<string, PoolEntry>();
  readonly budgets = new Map<string, BudgetSettings>();

  constructor(private readonly metrics: MetricsRecorder) {}

  get(pool: string): PoolEntry {
    const entry = this.pools.get(pool);
    if (!entry) throw new PoolNotFoundError(pool);
    return entry;
  }

  /** Throws when `settings` cannot be applied to pool `name`. */
  checkPool(name: string, settings: PoolSettings): void {
    if (typeof name !== "string" || !POOL_NAME.test(name)) {
      throw new InvalidArgumentError(
        `Invalid pool name ${JSON.stringify(name)}: use 1-128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit.`,
      );
    }
    const membership = settings.budget;
    if (!membership) return;
    const budget = this.budgets.get(membership.id);
    if (!budget) throw new BudgetNotFoundError(membership.id);
    const reservedByOthers = this.reservedIn(membership.id, name);
    assertReservationsFit(membership.id, budget, reservedByOthers + membership.reservedConcurrent);
  }

  /** Throws when the budget's new ceiling is below what its pools already reserve. */
  checkBudget(name: string, settings: BudgetSettings): void {
    if (typeof name !== "string" || !POOL_NAME.test(name)) {
      throw new InvalidArgumentError(
        `Invalid budget name ${JSON.stringify(name)}: use 1-128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit.`,
      );
    }
    assertReservationsFit(name, settings, this.reservedIn(name));
  }

  upsert(name: string, settings: PoolSettings): PoolEntry {
    const existing = this.pools.get(name);
    if (existing) {
      existing.settings = settings;
      // A pool no longer adaptive drops its learned concurrency now (definePool pushes it),
      // not at its next release; learned RPM and pauses stay: they are not adaptive-only.
      if (!settings.adaptive) existing.learner = withoutConcurrency(existing.learner);
      const learned = settings.adaptive ? existing.learnedInStore.concurrency : null;
      existing.limit = Math.min(settings.maxConcurrent, learned ?? settings.maxConcurrent);
      return existing;
    }
    const entry: PoolEntry = {
      name,
      settings,
      meter: this.metrics.forPool(name),
      learner: initialLearnerState(),
      learnedInStore: NOTHING_LEARNED,
      sharedVersion: -1,
      held: 0,
      queued: 0,
      limit: settings.maxConcurrent,
    };
    this.pools.set(name, entry);
    return entry;
  }

  membersOf(budget: string): PoolEntry[] {
    return [...this.pools.values()].filter((entry) => entry.settings.budget?.id === budget);
  }

  private reservedIn(budget: string, exceptPool?: string): number {
    let reserved = 0;
    for (const entry of this.membersOf(budget)) {
      if (entry.name !== exceptPool) reserved += entry.settings.budget!.reservedConcurrent;
    }
    return reserved;
  }
}

function assertReservationsFit(budget: string, settings: BudgetSettings, reserved: number): void {
  const origin = settings.originMaxConcurrent;
  if (origin !== null && reserved > origin) {
    throw new InvalidArgumentError(
      `Budget "${budget}": reservations (${reserved}) exceed originMaxConcurrent (${origin}).`,
    );
  }
}

/** The part of pool settings the store enforces. */
export function toStoreConfig(settings: PoolSettings): StorePoolConfig {
  return {
    maxConcurrent: settings.maxConcurrent,
    queueSize: settings.queue.size,
    termMs: settings.termMs,
    requestTimeoutMs: settings.requestTimeoutMs,
    rpm: settings.rpm,
    budget: settings.budget ? { ...settings.budget } : null,
  };
}

/**
 * A pool's status from its entry and the store's snapshot (null when the store lost the pool).
 *
 * @example
 * ```ts
 * const status = toPoolStatus(entry, await store.snapshot("llm"), clock.now());
 * ```
 */
export function toPoolStatus(
  entry: PoolEntry,
  snapshot: PoolSnapshot | null,
  now: number,
): PoolStatus {
  const learned = snapshot?.learned ?? NOTHING_LEARNED;
  // The store may hold what another process learned since this one last learned.
  const learner =
    snapshot && !sameLearned(learned, entry.learnedInStore)
      ? adoptShared(entry.learner, learned)
      : entry.learner;
  return {
    pool: entry.name,
    settings: entry.settings,
    held: snapshot?.held ?? 0,
    queued: snapshot?.queued ?? 0,
    effectiveLimit: snapshot?.limit ?? entry.settings.maxConcurrent,
    learned,
    learner: learnerStatus(learner, now),
  };
}
