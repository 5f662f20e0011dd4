import type { RateInfo } from "./types.js";

/*
 * Probe backoff (quoted by docs/learning.md). A probe raises the learned limit one above
 * the level the pool runs at; when the upstream answers it with a concurrency throttle, the
 * level it failed at is remembered, and the next probe there needs more:
 *
 * - after n consecutive failures at a level (n ≥ 1), the next probe to that level waits
 *   min(PROBE_WAIT_CAP_MS, PROBE_WAIT_BASE_MS × 2^(n−1)) after the last failure, and needs
 *   min(PROBE_SUCCESS_CAP, PROBE_FACTOR × limit × 2^n) busy successes since it (never fewer
 *   than PROBE_FACTOR × limit): time bounds the 429s of a fast pool, successes those of a
 *   slow one;
 * - a throttle at another level starts a new count there (the upstream moved);
 * - reset (no backoff): a probe that held (a full streak at the level that had failed), a
 *   higher request or token limit or another window in the upstream's rate headers (room
 *   the upstream says it has), or QUIET_RESET_MS without a busy success or a throttle.
 */

/** Where probing failed and what the next probe there must wait for; replace, never mutate. */
export interface ProbeBackoff {
  /** Limit value whose probes failed, or null: no backoff. */
  readonly level: number | null;
  /** Consecutive failed probes at `level`. */
  readonly failures: number;
  /** Epoch ms of the latest failure at `level`. */
  readonly failedAt: number;
}

/** Rate facts the upstream reported last whose rise or change means it may have room again. */
export interface ReportedCapacity {
  readonly limit: number | undefined;
  readonly windowMs: number | undefined;
  readonly tokenLimit: number | undefined;
}

/** Busy successes needed per unit of the limit before it is probed one higher. */
export const PROBE_FACTOR = 5;
/** Wait before the next probe after the first failure at a level; doubles per failure. */
export const PROBE_WAIT_BASE_MS = 1000;
/** Longest wait between probes at a level that keeps failing. */
export const PROBE_WAIT_CAP_MS = 30_000;
/** Most busy successes the next probe at a failing level can need. */
export const PROBE_SUCCESS_CAP = 400;
/** A pool without a busy success or a throttle this long forgets its probe backoff. */
export const QUIET_RESET_MS = 5 * 60_000;

/** No probe failed (or the failures were forgotten). */
export const NO_BACKOFF: ProbeBackoff = Object.freeze({
  level: null,
  failures: 0,
  failedAt: Number.NEGATIVE_INFINITY,
});

/**
 * The backoff after a throttle that brought the limit down to `level − 1`: one more failure
 * when `level` is the level that failed before, else the first at a new level.
 *
 * @example
 * ```ts
 * let backoff = probeFailed(NO_BACKOFF, 13, now); // { level: 13, failures: 1, failedAt: now }
 * backoff = probeFailed(backoff, 13, now + 2_000); // failures: 2
 * ```
 */
export function probeFailed(backoff: ProbeBackoff, level: number, now: number): ProbeBackoff {
  const failures = backoff.level === level ? backoff.failures + 1 : 1;
  return { level, failures, failedAt: now };
}

/**
 * Wait after the latest failure before the next probe to a level that failed `failures`
 * times in a row: 0, then PROBE_WAIT_BASE_MS doubling up to PROBE_WAIT_CAP_MS.
 *
 * @example
 * ```ts
 * probeWaitMs(0); // 0
 * probeWaitMs(3); // 4 000
 * probeWaitMs(50); // 30 000
 * ```
 */
export function probeWaitMs(failures: number): number {
  return failures <= 0 ? 0 : Math.min(PROBE_WAIT_CAP_MS, PROBE_WAIT_BASE_MS * 2 ** (failures - 1));
}

/**
 * Busy successes needed before probing from `floorLimit` to the level that failed `failures`
 * times in a row (0: the plain PROBE_FACTOR × limit).
 *
 * @example
 * ```ts
 * successesToProbe(4, 0); // 20
 * successesToProbe(4, 2); // 80
 * successesToProbe(4, 9); // 400
 * ```
 */
export function successesToProbe(floorLimit: number, failures: number): number {
  const base = PROBE_FACTOR * floorLimit;
  if (failures <= 0) return base;
  return Math.max(base, Math.min(PROBE_SUCCESS_CAP, base * 2 ** failures));
}

/**
 * True when a pool at `floorLimit` with `streak` busy successes may probe one higher at
 * `now`. Only the level that failed is held back; a probe below it (the pool on its way back
 * up after a drop) needs the plain streak.
 *
 * @example
 * ```ts
 * mayProbe(backoff, 12, 60, now);
 * ```
 */
export function mayProbe(
  backoff: ProbeBackoff,
  floorLimit: number,
  streak: number,
  now: number,
): boolean {
  if (backoff.level !== floorLimit + 1) return streak >= successesToProbe(floorLimit, 0);
  return streak >= successesToProbe(floorLimit, backoff.failures) && now >= nextProbeAt(backoff);
}

/**
 * Epoch ms from which a probe to `backoff.level` may start (time only; the successes it also
 * needs are counted by the learner). -Infinity without backoff.
 *
 * @example
 * ```ts
 * const inMs = Math.max(0, nextProbeAt(backoff) - now);
 * ```
 */
export function nextProbeAt(backoff: ProbeBackoff): number {
  return backoff.level === null
    ? Number.NEGATIVE_INFINITY
    : backoff.failedAt + probeWaitMs(backoff.failures);
}

/**
 * The capacity facts of `rate`, or `previous` itself when they are the same (so an unchanged
 * report allocates nothing).
 *
 * @example
 * ```ts
 * const reported = reportedCapacity(state.reported, outcome.rate);
 * ```
 */
export function reportedCapacity(
  previous: ReportedCapacity | null,
  rate: RateInfo,
): ReportedCapacity | null {
  if (rate.limit === undefined && rate.tokenLimit === undefined) return previous;
  // A report stating only some of the facts keeps the others: partial reports do not flap.
  const limit = rate.limit ?? previous?.limit;
  const windowMs = rate.limit === undefined ? previous?.windowMs : rate.windowMs;
  const tokenLimit = rate.tokenLimit ?? previous?.tokenLimit;
  if (
    previous !== null &&
    previous.limit === limit &&
    previous.windowMs === windowMs &&
    previous.tokenLimit === tokenLimit
  ) {
    return previous;
  }
  return { limit, windowMs, tokenLimit };
}

/**
 * True when the upstream reports more room than before: a higher request or token limit, or
 * another window (its quota was redefined). A first report is no news.
 *
 * @example
 * ```ts
 * if (reportsMoreRoom(state.reported, reported)) backoff = NO_BACKOFF;
 * ```
 */
export function reportsMoreRoom(
  previous: ReportedCapacity | null,
  next: ReportedCapacity | null,
): boolean {
  if (previous === null || next === null || previous === next) return false;
  return (
    rises(previous.limit, next.limit) ||
    rises(previous.tokenLimit, next.tokenLimit) ||
    (previous.windowMs !== undefined &&
      next.windowMs !== undefined &&
      previous.windowMs !== next.windowMs)
  );
}

function rises(before: number | undefined, after: number | undefined): boolean {
  return before !== undefined && after !== undefined && after > before;
}
