import type { LearnedLimits } from "../store/types.js";
import { MAX_RPM } from "../util/limits.js";
import type { ProbeBackoff, ReportedCapacity } from "./probe-backoff.js";
import {
  mayProbe,
  NO_BACKOFF,
  probeFailed,
  QUIET_RESET_MS,
  reportedCapacity,
  reportsMoreRoom,
} from "./probe-backoff.js";
import { MINUTE_MS } from "./rate-info.js";
import { toLearnedProbe } from "./shared-learning.js";
import type { ParsedOutcome, RateInfo } from "./types.js";

export { PROBE_FACTOR } from "./probe-backoff.js";

/*
 * How a pool learns from release outcomes (quoted by docs/library.md):
 *
 * - Pause: `Retry-After` → pausedUntil = max(pausedUntil, now + retryAfterMs), except on a
 *   success or redirect (status < 400: a 202 "poll later" or a 3xx's wait is about that one
 *   resource, not the pool) and for a concurrency throttle in an adaptive pool (below), which
 *   the limit decrease answers. A hint with no status counts (it is reported when throttling
 *   was seen), and so does any 4xx (some APIs throttle with 403 + Retry-After). A
 *   rate window reported exhausted (remaining 0 with a reset; the same for tokens) pauses
 *   until its reset too. pausedUntil never moves back.
 * - A concurrency throttle is a throttle whose request window is reported with room left
 *   (remaining > 0, and tokenRemaining not 0). Its Retry-After does not pause an adaptive
 *   pool: the upstream is full, not out of quota, so one slot fewer is the remedy, and a
 *   pool-wide pause would idle every other slot. (Measured by `bench/goodput.ts`: with
 *   whole-second Retry-After on concurrency 429s, pausing cut goodput to ~70% of optimum;
 *   without the pause it stays above 95%.) Without rate headers a throttle cannot be told
 *   apart, so it pauses.
 * - Learned RPM: rpm = max(1, floor(limit × 60 000 / windowMs)) from the latest reported
 *   request limit; a limit without a window is taken as per minute. A rate above MAX_RPM
 *   (1 000 000) clears the learned RPM instead: no gate is kept for it.
 * - Concurrency (adaptive pools only), AIMD-like with an additive decrease:
 *   - on a throttle (429 or throttled > 0) that is not an exhausted rate window, and whose
 *     slot was granted at or after the last decrease (older slots belong to the congestion
 *     episode already answered):
 *       limit = max(1, min(limit ?? maxConcurrent, heldAtGrant) − 1), streak = 0;
 *     the level it failed at (the new limit + 1) enters the probe backoff
 *     (`probe-backoff.ts`);
 *   - on a success (status < 400 or unknown, no throttle) while the pool is busy
 *     (held ≥ floor(limit) or queued > 0): streak += 1; once
 *     streak ≥ PROBE_FACTOR × floor(limit) (more, and not before a wait, when the next level
 *     is one whose probes failed: see `probe-backoff.ts`): limit += 1, streak = 0;
 *   - a limit that reaches maxConcurrent becomes null: nothing is left to learn.
 * - 5xx: no change, except 503 with Retry-After, which pauses.
 * - Every pause lasts at most MAX_PAUSE_MS (5 minutes) from the outcome that set it, whatever
 *   the hint (Retry-After, a reset of an exhausted window; from an upstream or a caller's
 *   report alike): a hint of hours would let one report stop a pool for that long. A longer
 *   quota reset costs one throttled call per 5 minutes instead.
 * Bounds: 1 ≤ limit ≤ maxConcurrent; pausedUntil is monotonic and ≤ now + MAX_PAUSE_MS;
 * rpm ≥ 1.
 */

/**
 * Longest pause one outcome can set (5 minutes): longer hints are cut to it.
 *
 * @example
 * ```ts
 * learn(state, parseOutcome({ status: 429, retryAfterMs: 86_400_000 }, now), context).pausedUntil;
 * // now + MAX_PAUSE_MS
 * ```
 */
export const MAX_PAUSE_MS = 5 * 60_000;

/** What a pool has learned so far; replace it, never mutate it. */
export interface LearnerState {
  /** Adaptive concurrency limit (may be fractional); null = nothing learned. */
  limit: number | null;
  /**
   * Epoch ms of the last decrease (`-Infinity`: none yet): throttles of slots granted before
   * it, or in the same millisecond, are stale.
   */
  lastDecreaseAt: number;
  /** Busy successes since the last change of the limit. */
  successStreak: number;
  /** Learned requests per minute, or null. */
  rpm: number | null;
  /** Epoch ms until which admissions pause; 0 when never paused. */
  pausedUntil: number;
  /** Where probes above the limit failed, and how often in a row. */
  probe: ProbeBackoff;
  /** Epoch ms of the latest busy success or counted throttle (-Infinity: none yet). */
  activeAt: number;
  /** Capacity the upstream's rate headers reported last, or null. */
  reported: ReportedCapacity | null;
}

/** Facts about the pool and the released slot at release time. */
export interface LearnContext {
  now: number;
  maxConcurrent: number;
  adaptive: boolean;
  /** Slots held in the pool at release time, the released slot included. */
  held: number;
  /** Waiters queued at release time. */
  queued: number;
  /** The released slot: when it was granted and how many slots were held right after. */
  slot: { acquiredAt: number; heldAtGrant: number };
}

/**
 * A state with nothing learned.
 *
 * @example
 * ```ts
 * let learner = initialLearnerState();
 * ```
 */
export function initialLearnerState(): LearnerState {
  return {
    limit: null,
    lastDecreaseAt: Number.NEGATIVE_INFINITY,
    successStreak: 0,
    rpm: null,
    pausedUntil: 0,
    probe: NO_BACKOFF,
    activeAt: Number.NEGATIVE_INFINITY,
    reported: null,
  };
}

/**
 * The state without learned concurrency (the pool is no longer adaptive); pauses and RPM stay.
 *
 * @example
 * ```ts
 * entry.learner = withoutConcurrency(entry.learner);
 * ```
 */
export function withoutConcurrency(state: LearnerState): LearnerState {
  if (state.limit === null && state.successStreak === 0 && state.probe === NO_BACKOFF) return state;
  return { ...state, limit: null, successStreak: 0, probe: NO_BACKOFF };
}

/**
 * Folds one release outcome into the learner state (rules in the comment block at the top of
 * this file). Pure: returns `state` itself when nothing changed, else a new object. A
 * non-adaptive pool learns pauses and RPM only, and drops any learned concurrency. In an
 * adaptive pool a 429 whose rate window still has room lowers the limit instead of pausing.
 *
 * @example
 * ```ts
 * const outcome = parseOutcome({ status: 429 }, now);
 * learner = learn(learner, outcome, {
 *   now, maxConcurrent: 10, adaptive: true, held: 8, queued: 3,
 *   slot: { acquiredAt: slot.acquiredAt, heldAtGrant: slot.heldAtGrant },
 * });
 * // learner.limit === 7 when the slot was granted with 8 held
 * ```
 */
export function learn(
  state: LearnerState,
  outcome: ParsedOutcome,
  context: LearnContext,
): LearnerState {
  const { now, maxConcurrent } = context;
  const { status, rate } = outcome;
  const retryAfterMs = isDelay(outcome.retryAfterMs)
    ? Math.min(outcome.retryAfterMs, MAX_PAUSE_MS)
    : null;
  // A pause set before the cap existed (kept in Redis) is cut to it too.
  const cappedPause = Math.min(state.pausedUntil, now + MAX_PAUSE_MS);
  if (status !== null && status >= 500) {
    if (status !== 503 || retryAfterMs === null || now + retryAfterMs <= cappedPause) {
      return cappedPause === state.pausedUntil ? state : { ...state, pausedUntil: cappedPause };
    }
    return { ...state, pausedUntil: now + retryAfterMs };
  }

  let { limit, lastDecreaseAt, successStreak, rpm, probe, activeAt, reported } = state;
  let pausedUntil = cappedPause;
  const concurrencyThrottle = context.adaptive && outcome.throttled && hasRoomLeft(rate);
  const answeredFine = status !== null && status < 400 && !outcome.throttled;
  if (retryAfterMs !== null && !concurrencyThrottle && !answeredFine) {
    pausedUntil = Math.max(pausedUntil, now + retryAfterMs);
  }
  if (rate !== null) {
    pausedUntil = Math.max(pausedUntil, exhaustedUntil(rate, now));
    const rateRpm = learnedRpm(rate);
    // A reported rate above MAX_RPM is no gate worth keeping (and would size the gate's log).
    if (rateRpm !== null) rpm = rateRpm > MAX_RPM ? null : rateRpm;
    reported = reportedCapacity(reported, rate);
  }

  if (!context.adaptive) {
    limit = null;
    successStreak = 0;
    probe = NO_BACKOFF;
  } else {
    limit = belowCeiling(limit, maxConcurrent);
    if (limit === null) successStreak = 0;
    if (
      probe !== NO_BACKOFF &&
      (now - activeAt >= QUIET_RESET_MS || reportsMoreRoom(state.reported, reported))
    ) {
      probe = NO_BACKOFF;
    }
    if (outcome.throttled) {
      // A slot granted in the millisecond of the last decrease may have been granted before
      // it: counting it could cut the limit again for the same episode (down to the few
      // slots held when it was granted), while skipping it loses one signal at most.
      const stale = context.slot.acquiredAt <= lastDecreaseAt;
      if (!isRateExhausted(rate) && !stale) {
        const current = limit ?? maxConcurrent;
        const heldAtGrant = context.slot.heldAtGrant;
        const congestedAt = Number.isFinite(heldAtGrant) ? Math.min(current, heldAtGrant) : current;
        const lowered = Math.max(1, congestedAt - 1);
        limit = belowCeiling(lowered, maxConcurrent);
        probe = probeFailed(probe, lowered + 1, now);
        lastDecreaseAt = now;
        successStreak = 0;
        activeAt = now;
      }
    } else if (limit !== null && isSuccess(status) && isBusy(limit, context)) {
      successStreak += 1;
      activeAt = now;
      const floor = Math.floor(limit);
      if (mayProbe(probe, floor, successStreak, now)) {
        // A full streak at the level whose probe had failed: that probe held.
        if (probe.level !== null && floor >= probe.level) probe = NO_BACKOFF;
        limit = belowCeiling(limit + 1, maxConcurrent);
        successStreak = 0;
      }
    }
  }

  if (
    limit === state.limit &&
    lastDecreaseAt === state.lastDecreaseAt &&
    successStreak === state.successStreak &&
    rpm === state.rpm &&
    pausedUntil === state.pausedUntil &&
    probe === state.probe &&
    activeAt === state.activeAt &&
    reported === state.reported
  ) {
    return state;
  }
  return { limit, lastDecreaseAt, successStreak, rpm, pausedUntil, probe, activeAt, reported };
}

/**
 * True when the outcome tightens the limits at once: a throttle, a pause (`Retry-After`) or
 * an exhausted window. The governor learns such an outcome before it releases the slot, so
 * the waiter the slot goes to already obeys the tighter limit.
 *
 * @example
 * ```ts
 * tightensAtOnce(parseOutcome({ status: 429 }, now)); // true
 * tightensAtOnce(parseOutcome({ status: 200 }, now)); // false
 * ```
 */
export function tightensAtOnce(outcome: ParsedOutcome): boolean {
  return outcome.throttled || outcome.retryAfterMs !== null || isRateExhausted(outcome.rate);
}

/**
 * The store's view of a learner state: concurrency is floor(limit) clamped to
 * [1, maxConcurrent], or null when nothing is learned; the probe backoff when there is one.
 *
 * @example
 * ```ts
 * await store.setLearned(pool, toLearnedLimits(learner, settings.maxConcurrent));
 * ```
 */
export function toLearnedLimits(state: LearnerState, maxConcurrent: number): LearnedLimits {
  const limits: LearnedLimits = {
    concurrency:
      state.limit === null ? null : Math.min(maxConcurrent, Math.max(1, Math.floor(state.limit))),
    rpm: state.rpm,
    // Whole ms, as Redis hands them back: a fraction would make every process see a change.
    pausedUntil: Math.ceil(state.pausedUntil),
  };
  const probe = toLearnedProbe(state.probe);
  if (probe !== undefined) limits.probe = probe;
  return limits;
}

/** A limit at or above the ceiling teaches nothing: it becomes null. */
function belowCeiling(limit: number | null, maxConcurrent: number): number | null {
  return limit !== null && limit < maxConcurrent ? limit : null;
}

function isSuccess(status: number | null): boolean {
  return status === null || status < 400;
}

/** Probing higher is only meaningful when the current limit is what holds the pool back. */
function isBusy(limit: number, context: LearnContext): boolean {
  return context.held >= Math.floor(limit) || context.queued > 0;
}

/** The upstream reports room left in its request window: a 429 now is about concurrency. */
function hasRoomLeft(rate: RateInfo | null): boolean {
  return (
    rate !== null && rate.remaining !== undefined && rate.remaining > 0 && rate.tokenRemaining !== 0
  );
}

/** A 429 with an empty rate window is a rate throttle, not a concurrency one. */
function isRateExhausted(rate: RateInfo | null): boolean {
  return rate !== null && (rate.remaining === 0 || rate.tokenRemaining === 0);
}

/** Epoch ms until which an exhausted window blocks admissions, or 0. */
function exhaustedUntil(rate: RateInfo, now: number): number {
  let until = 0;
  if (rate.remaining === 0 && isDelay(rate.resetMs)) until = now + rate.resetMs;
  if (rate.tokenRemaining === 0 && isDelay(rate.tokenResetMs)) {
    until = Math.max(until, now + rate.tokenResetMs);
  }
  return Math.min(until, now + MAX_PAUSE_MS);
}

function learnedRpm(rate: RateInfo): number | null {
  const { limit, windowMs } = rate;
  if (limit === undefined || !Number.isFinite(limit) || limit < 0) return null;
  const window =
    windowMs !== undefined && windowMs > 0 && Number.isFinite(windowMs) ? windowMs : MINUTE_MS;
  return Math.max(1, Math.floor((limit * MINUTE_MS) / window));
}

function isDelay(ms: number | null | undefined): ms is number {
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0;
}
