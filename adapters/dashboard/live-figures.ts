import type { PoolRecord } from "../../src/catalog/types.js";
import type { LearnerStatus } from "../../src/learning/learner-status.js";
import type { DashboardDeps } from "./dashboard-env.js";

/** A pool's live figures as the overview and the pool page show them. */
export interface PoolFigures {
  /** False when the governor does not run the pool (yet): the figures are then zeros. */
  live: boolean;
  held: number;
  queued: number;
  effectiveLimit: number;
  maxConcurrent: number;
  /** Admissions in the current minute. */
  rpmUsed: number;
  /** The RPM gate in force: the configured one tightened by learning; null for none. */
  rpmLimit: number | null;
  /** Epoch ms until which the pool admits nobody (an upstream Retry-After); 0 when not paused. */
  pausedUntil: number;
  /** Learned concurrency limit, or null. */
  learnedLimit: number | null;
  /** Where the learner would probe next and how long it backs off there; null when idle or nothing is learned. */
  learner: LearnerStatus | null;
}

function minOrNull(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}

/**
 * Reads a pool's live figures from the governor and the metrics recorder.
 *
 * @example
 * ```ts
 * const figures = await poolFigures(deps, pool); // { held: 2, effectiveLimit: 8, … }
 * ```
 */
export async function poolFigures(deps: DashboardDeps, pool: PoolRecord): Promise<PoolFigures> {
  const now = deps.clock.now();
  const minuteStart = Math.floor(now / deps.metrics.bucketMs) * deps.metrics.bucketMs;
  const rpmUsed = deps.metrics.totals(pool.subdomain, minuteStart, now + 1).admitted;
  const idle: PoolFigures = {
    live: false,
    held: 0,
    queued: 0,
    effectiveLimit: pool.maxConcurrent,
    maxConcurrent: pool.maxConcurrent,
    rpmUsed,
    rpmLimit: pool.rpm,
    pausedUntil: 0,
    learnedLimit: null,
    learner: null,
  };
  if (!deps.governor.poolSettings(pool.subdomain)) return idle;
  try {
    const status = await deps.governor.status(pool.subdomain);
    return {
      live: true,
      held: status.held,
      queued: status.queued,
      effectiveLimit: status.effectiveLimit,
      maxConcurrent: status.settings.maxConcurrent,
      rpmUsed,
      rpmLimit: minOrNull(status.settings.rpm, status.learned.rpm),
      pausedUntil: status.learned.pausedUntil > now ? status.learned.pausedUntil : 0,
      learnedLimit: status.learned.concurrency,
      learner: status.learner.nextProbeLevel === null ? null : status.learner,
    };
  } catch {
    // Removed between the check and the read, or the slot store is away: show it idle.
    return idle;
  }
}
