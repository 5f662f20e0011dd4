import type { Clock } from "../clock/clock.js";
import { tightensAtOnce } from "../learning/learner.js";
import { parseOutcome, validateOutcomeReport } from "../learning/parse-outcome.js";
import type { OutcomeReport } from "../learning/types.js";
import type { MaybePromise, SlotStore, StoreReleaseResult } from "../store/types.js";
import type { Lesson } from "./pool-learning.js";
import { learnFromOutcome } from "./pool-learning.js";
import type { PoolEntry } from "./pool-registry.js";

/** A release's answer to its caller. */
export interface ReleaseAnswer {
  released: boolean;
}

const RELEASED: ReleaseAnswer = Object.freeze({ released: true });
/** A release of nothing held: the slot was gone already, or its pool. */
export const NOT_RELEASED: ReleaseAnswer = Object.freeze({ released: false });

/** What a release needs of the governor. */
export interface ReleaseDeps {
  readonly store: SlotStore;
  readonly clock: Clock;
  /** The store reads the governor's clock: its reading at a release serves both. */
  readonly sharesClock: boolean;
}

/**
 * Releases a slot and learns from its upstream outcome. An outcome that tightens the limits
 * at once (a throttle, a pause, an exhausted window) is learned before the release, from the
 * slot as the store holds it, so the waiter the slot is handed to already obeys the tighter
 * limit; any other outcome is learned after the release, from the figures it reports.
 * Answers synchronously when the store does.
 *
 * @example
 * ```ts
 * await releaseAndLearn({ store, clock, sharesClock: false }, entry, slotId, { status: 429 });
 * ```
 */
export function releaseAndLearn(
  deps: ReleaseDeps,
  entry: PoolEntry,
  slotId: string,
  report: OutcomeReport | undefined,
): MaybePromise<ReleaseAnswer> {
  if (report === undefined) return releaseThenLearn(deps, entry, slotId, null);
  const lesson = lessonOf(report, deps.clock.now());
  if (!tightensAtOnce(lesson.outcome)) return releaseThenLearn(deps, entry, slotId, lesson);
  return andThen(deps.store.inspect(entry.name, slotId), (inspected) => {
    // Not held (or the store cannot tell now): the release answers for it, and learns after.
    if (inspected === null) return releaseThenLearn(deps, entry, slotId, lesson);
    const learned = learnFromOutcome(deps.store, entry, inspected, lesson);
    if (!(learned instanceof Promise)) return releaseThenLearn(deps, entry, slotId, null);
    return learned.then(
      () => releaseThenLearn(deps, entry, slotId, null),
      // The slot is freed whatever became of the learning; the failure still reaches the caller.
      async (error: unknown) => {
        await releaseThenLearn(deps, entry, slotId, null);
        throw error;
      },
    );
  });
}

/**
 * Learns from an upstream outcome while its slot is still held (a `fetch` whose 429 body is
 * still on its way): from the slot as the store holds it, as a tightening release would. The
 * later release then reports nothing more. Nothing is learned for a slot no longer held.
 *
 * @example
 * ```ts
 * await learnWhileHeld({ store, clock, sharesClock: false }, entry, slotId, { status: 429 });
 * ```
 */
export function learnWhileHeld(
  deps: ReleaseDeps,
  entry: PoolEntry,
  slotId: string,
  report: OutcomeReport,
): MaybePromise<void> {
  const lesson = lessonOf(report, deps.clock.now());
  return andThen(deps.store.inspect(entry.name, slotId), (inspected) =>
    inspected === null ? undefined : learnFromOutcome(deps.store, entry, inspected, lesson),
  );
}

/** An outcome report, validated (bad fields dropped) and parsed at `now`. */
function lessonOf(report: OutcomeReport, now: number): Lesson {
  const valid = validateOutcomeReport(report).report;
  return { report: valid, outcome: parseOutcome(valid, now), now };
}

function releaseThenLearn(
  deps: ReleaseDeps,
  entry: PoolEntry,
  slotId: string,
  lesson: Lesson | null,
): MaybePromise<ReleaseAnswer> {
  const answer = deps.store.release(entry.name, slotId);
  // No closure on the synchronous path: this is every release of the memory store.
  if (answer instanceof Promise)
    return answer.then((result) => afterRelease(deps, entry, result, lesson));
  return afterRelease(deps, entry, answer, lesson);
}

function afterRelease(
  deps: ReleaseDeps,
  entry: PoolEntry,
  result: StoreReleaseResult,
  lesson: Lesson | null,
): MaybePromise<ReleaseAnswer> {
  const { slot, releasedAt } = result;
  if (!result.released || !slot) return NOT_RELEASED;
  const now = deps.sharesClock && releasedAt !== undefined ? releasedAt : deps.clock.now();
  // Hold time on one clock: the store's, when it tells the release time.
  entry.meter.released(now, (releasedAt ?? now) - slot.acquiredAt);
  if (lesson === null) return RELEASED;
  const facts = {
    slot,
    held: result.held ?? entry.held,
    queued: result.queued ?? entry.queued,
    shared: result.shared,
  };
  const learned = learnFromOutcome(deps.store, entry, facts, lesson);
  return learned instanceof Promise ? learned.then(() => RELEASED) : RELEASED;
}

/** `then` that stays synchronous for a value that is not a promise. */
function andThen<T, U>(
  value: MaybePromise<T>,
  next: (value: T) => MaybePromise<U>,
): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
