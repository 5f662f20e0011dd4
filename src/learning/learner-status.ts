import type { LearnerState } from "./learner.js";
import { nextProbeAt, successesToProbe } from "./probe-backoff.js";

/**
 * What a pool's learner is doing, for status output and dashboards: the limit it learned,
 * how far the next probe above it is, and how often probes failed at the level it would
 * reach.
 */
export interface LearnerStatus {
  /** Learned concurrency limit (whole slots); null: nothing learned, `maxConcurrent` applies. */
  limit: number | null;
  /** The level the next probe would reach (limit + 1); null when there is nothing to probe. */
  nextProbeLevel: number | null;
  /**
   * ms until the next probe may start, counting time only (it also needs
   * `successesToNextProbe` more busy successes); 0: no wait. Null when there is nothing to
   * probe.
   */
  nextProbeInMs: number | null;
  /** Busy successes still needed before the next probe; null when there is nothing to probe. */
  successesToNextProbe: number | null;
  /** Probes that failed in a row at `nextProbeLevel` (0: none, no backoff). */
  failedProbes: number;
}

/**
 * The learner's state as status output shows it, at `now`.
 *
 * @example
 * ```ts
 * const { limit, nextProbeInMs, failedProbes } = learnerStatus(entry.learner, clock.now());
 * // { limit: 12, nextProbeInMs: 8000, failedProbes: 4, ... } after four failed probes at 13
 * ```
 */
export function learnerStatus(state: LearnerState, now: number): LearnerStatus {
  if (state.limit === null) {
    return {
      limit: null,
      nextProbeLevel: null,
      nextProbeInMs: null,
      successesToNextProbe: null,
      failedProbes: 0,
    };
  }
  const floor = Math.floor(state.limit);
  const level = floor + 1;
  const backoff = state.probe.level === level ? state.probe : null;
  const failures = backoff?.failures ?? 0;
  return {
    limit: floor,
    nextProbeLevel: level,
    nextProbeInMs: backoff === null ? 0 : Math.max(0, nextProbeAt(backoff) - now),
    successesToNextProbe: Math.max(0, successesToProbe(floor, failures) - state.successStreak),
    failedProbes: failures,
  };
}
