import { type Clock, systemClock, type TimerHandle } from "../clock/clock.js";
import type { AccessLog, AccessLogRetention } from "./types.js";

/** Options of {@link startAccessLogRetention}. */
export interface AccessLogRetentionOptions {
  accessLog: AccessLog;
  /** The current retention of every pool (read at each run, so catalog edits apply). */
  retention: () => Iterable<AccessLogRetention> | Promise<Iterable<AccessLogRetention>>;
  clock?: Clock;
  /** How often to prune (ms); default one hour. */
  intervalMs?: number;
  onError?: (error: unknown) => void;
}

/** A running retention job. */
export interface AccessLogRetentionJob {
  /** Prunes now; returns how many entries went. */
  runNow(): Promise<number>;
  stop(): void;
}

/**
 * Keeps the access log within each pool's retention (a pool's `metricsRetentionDays`, and
 * nothing from before the pool's creation): prunes once at start and then every `intervalMs`.
 *
 * @example
 * ```ts
 * const job = startAccessLogRetention({ accessLog, clock,
 *   retention: async () => (await catalog.store.listAllPools()).map((pool) => ({ pool: pool.subdomain, retentionDays: pool.metricsRetentionDays })) });
 * job.stop();
 * ```
 */
export function startAccessLogRetention(options: AccessLogRetentionOptions): AccessLogRetentionJob {
  const clock = options.clock ?? systemClock;
  const intervalMs = options.intervalMs ?? 3_600_000;
  const onError = options.onError ?? (() => {});
  let timer: TimerHandle | null = null;
  let stopped = false;

  const runNow = async (): Promise<number> =>
    options.accessLog.prune(await options.retention(), clock.now());
  const tick = () => {
    timer = null;
    runNow()
      .catch(onError)
      .finally(() => {
        if (!stopped) timer = clock.setTimeout(tick, intervalMs);
      });
  };
  tick();
  return {
    runNow,
    stop() {
      stopped = true;
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
    },
  };
}

/**
 * Retention of catalog pools, for {@link startAccessLogRetention}.
 *
 * @example
 * ```ts
 * retentionOfPools(await catalog.store.listAllPools()); // [{ pool: "llm", retentionDays: 30, createdAt: 1767225600000 }]
 * ```
 */
export function retentionOfPools(
  pools: readonly { subdomain: string; metricsRetentionDays: number; createdAt: number }[],
): AccessLogRetention[] {
  return pools.map((pool) => ({
    pool: pool.subdomain,
    retentionDays: pool.metricsRetentionDays,
    createdAt: pool.createdAt,
  }));
}
