import { initialLearnerState, learn, toLearnedLimits } from "../learning/learner.js";
import { isCount } from "../learning/parse-outcome.js";
import { adoptShared, sameLearned } from "../learning/shared-learning.js";
import type { OutcomeReport, ParsedOutcome } from "../learning/types.js";
import type { HeldSlot, MaybePromise, SharedLearned, SlotStore } from "../store/types.js";
import type { PoolEntry } from "./pool-registry.js";
import { NOTHING_LEARNED } from "./pool-registry.js";

/** An upstream outcome to learn from, parsed once, with the instant it arrived. */
export interface Lesson {
  report: OutcomeReport;
  outcome: ParsedOutcome;
  now: number;
}

/** The released (or about to be released) slot and the pool's figures at that release. */
export interface ReleaseFacts {
  slot: HeldSlot;
  /** Slots held, the released one included. */
  held: number;
  queued: number;
  /** What the store holds as learned (another process may have written it), when it tells. */
  shared?: SharedLearned;
}

/**
 * Feeds one slot's upstream outcome to the pool's learner, and writes the learned limits to
 * the store when they changed. Answers synchronously when nothing is written or the store
 * answers synchronously.
 *
 * @example
 * ```ts
 * const now = clock.now();
 * const report = { status: 429, headers };
 * await learnFromOutcome(store, entry, { slot, held: 3, queued: 1 }, { report, outcome: parseOutcome(report, now), now });
 * ```
 */
export function learnFromOutcome(
  store: SlotStore,
  entry: PoolEntry,
  facts: ReleaseFacts,
  lesson: Lesson,
): MaybePromise<void> {
  const { outcome, report, now } = lesson;
  if (outcome.throttled) {
    // An unvalidated count (a library caller's) must not push the throttled total to 1e300.
    entry.meter.throttled(now, isCount(report.throttled) ? Math.max(1, report.throttled) : 1);
  }
  if (facts.shared !== undefined) adoptFromStore(entry, facts.shared);
  const { settings } = entry;
  const next = learn(entry.learner, outcome, {
    now,
    maxConcurrent: settings.maxConcurrent,
    adaptive: settings.adaptive,
    held: facts.held,
    queued: facts.queued,
    slot: facts.slot,
  });
  if (next === entry.learner) return;
  entry.learner = next;
  return pushLearned(store, entry);
}

/**
 * Writes the pool's learned limits to the store when they differ from what it has.
 *
 * @example
 * ```ts
 * await pushLearned(store, entry); // after a (re)definition of the pool
 * ```
 */
export function pushLearned(store: SlotStore, entry: PoolEntry): MaybePromise<void> {
  const limits = toLearnedLimits(entry.learner, entry.settings.maxConcurrent);
  if (sameLearned(limits, entry.learnedInStore)) return;
  entry.learnedInStore = limits;
  return store.setLearned(entry.name, limits);
}

/**
 * Forgets what the pool learned: its limits return to the configuration, in the store too.
 *
 * @example
 * ```ts
 * await resetLearning(store, entry);
 * ```
 */
export function resetLearning(store: SlotStore, entry: PoolEntry): MaybePromise<void> {
  entry.learner = initialLearnerState();
  entry.learnedInStore = NOTHING_LEARNED;
  return store.setLearned(entry.name, NOTHING_LEARNED);
}

/**
 * Takes over what another process sharing the store learned: a version this process has not
 * seen, holding something else than it wrote last. (Versions arrive in order on one
 * connection; any other version, an older one too, means the store was reset or re-created.)
 */
function adoptFromStore(entry: PoolEntry, shared: SharedLearned): void {
  if (shared.version === entry.sharedVersion) return;
  entry.sharedVersion = shared.version;
  if (sameLearned(shared.learned, entry.learnedInStore)) return;
  entry.learner = adoptShared(entry.learner, shared.learned);
  entry.learnedInStore = shared.learned;
}
