import type { LearnedLimits, LearnedProbe } from "../store/types.js";
import type { LearnerState } from "./learner.js";
import type { ProbeBackoff } from "./probe-backoff.js";
import { NO_BACKOFF } from "./probe-backoff.js";

/*
 * Processes sharing a store (Redis) share what their learners decide: each writes its learned
 * limits and probe backoff to the store, and adopts another process's before it learns from
 * its next outcome (the store hands them back with every release and inspection). So a probe
 * that failed in one process backs off in all, and one process's probe does not undo
 * another's decrease. Success streaks stay per process: counting them in the store would
 * cost a write per release.
 */

/**
 * The learner's state after adopting the limits and probe backoff another process wrote to
 * the store: its limit, RPM and backoff; the later of both pauses (none when the store's was
 * reset), decreases and activity. A changed
 * limit starts the success streak over, as a change made here would.
 *
 * @example
 * ```ts
 * if (!sameLearned(shared.learned, entry.learnedInStore)) entry.learner = adoptShared(entry.learner, shared.learned);
 * ```
 */
export function adoptShared(state: LearnerState, learned: LearnedLimits): LearnerState {
  const probe = fromLearnedProbe(learned.probe);
  return {
    ...state,
    limit: learned.concurrency,
    successStreak: learned.concurrency === state.limit ? state.successStreak : 0,
    lastDecreaseAt: Math.max(state.lastDecreaseAt, probe.failedAt),
    // The failure is activity too: a process that was quiet must not take it for stale.
    activeAt: Math.max(state.activeAt, probe.failedAt),
    rpm: learned.rpm,
    // 0 is a pause nobody ever set, or one an operator reset (`resetLearned`): a pause this
    // process had adopted must not come back with its next write.
    pausedUntil: learned.pausedUntil === 0 ? 0 : Math.max(state.pausedUntil, learned.pausedUntil),
    probe,
  };
}

/**
 * The store's form of a probe backoff; undefined without one (the field stays absent).
 *
 * @example
 * ```ts
 * toLearnedProbe(NO_BACKOFF); // undefined
 * ```
 */
export function toLearnedProbe(backoff: ProbeBackoff): LearnedProbe | undefined {
  if (backoff.level === null) return undefined;
  // Whole ms, as Redis hands them back (see toLearnedLimits).
  return {
    level: backoff.level,
    failures: backoff.failures,
    failedAt: Math.ceil(backoff.failedAt),
  };
}

function fromLearnedProbe(probe: LearnedProbe | null | undefined): ProbeBackoff {
  if (!probe) return NO_BACKOFF;
  return { level: probe.level, failures: probe.failures, failedAt: probe.failedAt };
}

/**
 * True when two learned records say the same (a missing and a null probe alike).
 *
 * @example
 * ```ts
 * sameLearned(toLearnedLimits(learner, max), entry.learnedInStore); // nothing to write
 * ```
 */
export function sameLearned(a: LearnedLimits, b: LearnedLimits): boolean {
  return (
    a.concurrency === b.concurrency &&
    a.rpm === b.rpm &&
    a.pausedUntil === b.pausedUntil &&
    sameProbe(a.probe ?? null, b.probe ?? null)
  );
}

function sameProbe(a: LearnedProbe | null, b: LearnedProbe | null): boolean {
  if (a === null || b === null) return a === b;
  return a.level === b.level && a.failures === b.failures && a.failedAt === b.failedAt;
}
