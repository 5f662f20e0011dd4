import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { AccessLog, AccessLogEntry } from "../../src/access-log/types.js";
import type { Governor } from "../../src/governor/types.js";
import type { MetricsObserver } from "../../src/metrics/types.js";

/** Buckets (seconds) of the queue wait and hold histograms: 5 ms to 5 minutes. */
const SECONDS_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** Reasons a pool's caller is refused by its key or policy, beside the governor's. */
export type AuthRefusalReason = "unauthorized" | "forbidden";

/** The server's Prometheus registry and the hooks that feed it. */
export interface PrometheusMetrics {
  /** The `Content-Type` of {@link PrometheusMetrics.scrape}'s text. */
  readonly contentType: string;
  /** Gives the governor's per-event values to the histograms and counters. */
  readonly observer: MetricsObserver;
  /** Counts one acquire attempt of the Lock API or the proxy (see `countingAccessLog`). */
  countAttempt(entry: AccessLogEntry): void;
  /** Counts a 401 or 403 for a pool the governor knows (other names are never labels). */
  countAuthRefusal(pool: string, reason: AuthRefusalReason): void;
  /** Drops every series of a pool that is gone. */
  forgetPool(pool: string): void;
  /** Reads the live gauges from the governor, then renders the exposition text. */
  scrape(): Promise<string>;
}

/**
 * The `/metrics` registry of one server: per-pool request outcomes, refusals by reason,
 * upstream 429s, queue wait and hold histograms (counted from this process's start), gauges
 * of slots in use, queue depth and limits (read from the governor at each scrape), and the
 * Node process metrics. Every pool label is a subdomain the governor knows; keys, tokens and
 * names a caller typed never become labels.
 *
 * @example
 * ```ts
 * const prometheus = createPrometheusMetrics(() => governor);
 * const recorder = new MetricsRecorder({ observer: prometheus.observer });
 * const text = await prometheus.scrape();
 * ```
 */
export function createPrometheusMetrics(governor: () => Governor): PrometheusMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const requests = new Counter({
    name: "sluice_pool_requests_total",
    help: "Acquire attempts through the Lock API and the pool proxy, by outcome.",
    labelNames: ["pool", "outcome"],
    registers,
  });
  const refusals = new Counter({
    name: "sluice_pool_refusals_total",
    help: "Callers turned away by policy (concurrency, queue_full, rpm, paused, budget) by their key (unauthorized, forbidden) or by a caller policy (ip_allowlist, ...).",
    labelNames: ["pool", "reason"],
    registers,
  });
  const throttled = new Counter({
    name: "sluice_pool_upstream_throttled_total",
    help: "429 answers of the upstream reported at release.",
    labelNames: ["pool"],
    registers,
  });
  const queueWait = new Histogram({
    name: "sluice_pool_queue_wait_seconds",
    help: "Time admitted callers waited in the queue (0 when admitted at once).",
    labelNames: ["pool"],
    buckets: SECONDS_BUCKETS,
    registers,
  });
  const hold = new Histogram({
    name: "sluice_pool_hold_seconds",
    help: "Time slots were held, from grant to release.",
    labelNames: ["pool"],
    buckets: SECONDS_BUCKETS,
    registers,
  });
  const gauges = {
    inFlight: new Gauge({
      name: "sluice_pool_in_flight",
      help: "Slots held now.",
      labelNames: ["pool"],
      registers,
    }),
    queueDepth: new Gauge({
      name: "sluice_pool_queue_depth",
      help: "Callers waiting in the queue now.",
      labelNames: ["pool"],
      registers,
    }),
    concurrency: new Gauge({
      name: "sluice_pool_concurrency_limit",
      help: "Concurrency limit: configured (maxConcurrent) and effective (learned limits applied).",
      labelNames: ["pool", "kind"],
      registers,
    }),
    rpm: new Gauge({
      name: "sluice_pool_rpm_limit",
      help: "Requests-per-minute limit: configured and effective (learned limits applied); absent when the pool has none.",
      labelNames: ["pool", "kind"],
      registers,
    }),
  };

  // Children per pool and label value, so the hot path neither hashes labels nor allocates.
  const children = new Map<string, Map<string, unknown>>();
  function child<T>(pool: string, key: string, make: () => T): T {
    let ofPool = children.get(pool);
    if (ofPool === undefined) {
      ofPool = new Map();
      children.set(pool, ofPool);
    }
    let found = ofPool.get(key) as T | undefined;
    if (found === undefined) {
      found = make();
      ofPool.set(key, found);
    }
    return found;
  }
  const outcomeOf = (pool: string, outcome: string) =>
    child(pool, `outcome|${outcome}`, () => requests.labels({ pool, outcome }));
  const reasonOf = (pool: string, reason: string) =>
    child(pool, `reason|${reason}`, () => refusals.labels({ pool, reason }));

  async function readGauges(): Promise<void> {
    for (const gauge of Object.values(gauges)) gauge.reset();
    const live = governor();
    for (const pool of live.pools()) {
      let status: Awaited<ReturnType<Governor["status"]>>;
      try {
        status = await live.status(pool);
      } catch {
        // Removed meanwhile, or its store away: the pool has no live gauges this scrape.
        continue;
      }
      gauges.inFlight.set({ pool }, status.held);
      gauges.queueDepth.set({ pool }, status.queued);
      gauges.concurrency.set({ pool, kind: "configured" }, status.settings.maxConcurrent);
      gauges.concurrency.set({ pool, kind: "effective" }, status.effectiveLimit);
      const configuredRpm = status.settings.rpm;
      const learnedRpm = status.learned.rpm;
      if (configuredRpm !== null) gauges.rpm.set({ pool, kind: "configured" }, configuredRpm);
      const effectiveRpm =
        configuredRpm === null ? learnedRpm : Math.min(configuredRpm, learnedRpm ?? configuredRpm);
      if (effectiveRpm !== null) gauges.rpm.set({ pool, kind: "effective" }, effectiveRpm);
    }
  }

  return {
    contentType: registry.contentType,
    observer: {
      admitted: (pool, waitMs) =>
        child(pool, "wait", () => queueWait.labels({ pool })).observe(waitMs / 1000),
      released: (pool, holdMs) =>
        child(pool, "hold", () => hold.labels({ pool })).observe(holdMs / 1000),
      throttled: (pool, count) =>
        child(pool, "throttled", () => throttled.labels({ pool })).inc(count),
    },
    countAttempt(entry) {
      outcomeOf(entry.pool, entry.outcome).inc();
      if (entry.reason !== null) reasonOf(entry.pool, entry.reason).inc();
    },
    countAuthRefusal(pool, reason) {
      if (governor().poolSettings(pool) === undefined) return;
      reasonOf(pool, reason).inc();
    },
    forgetPool(pool) {
      const ofPool = children.get(pool);
      if (ofPool === undefined) return;
      children.delete(pool);
      for (const key of ofPool.keys()) {
        const [label, value] = key.split("|");
        if (label === "outcome") requests.remove({ pool, outcome: value as string });
        else if (label === "reason") refusals.remove({ pool, reason: value as string });
      }
      throttled.remove({ pool });
      queueWait.remove({ pool });
      hold.remove({ pool });
    },
    async scrape() {
      await readGauges();
      return registry.metrics();
    },
  };
}

/**
 * The access log the Lock API and the proxy write to, also counting each attempt into the
 * Prometheus metrics.
 *
 * @example
 * ```ts
 * const accessLog = countingAccessLog(server.accessLog, prometheus.countAttempt);
 * ```
 */
export function countingAccessLog(
  accessLog: AccessLog,
  count: (entry: AccessLogEntry) => void,
): AccessLog {
  return {
    append(entry) {
      count(entry);
      accessLog.append(entry);
    },
    list: (pool, query) => accessLog.list(pool, query),
    prune: (retention, now) => accessLog.prune(retention, now),
    forgetPool: (pool) => accessLog.forgetPool(pool),
    flush: () => accessLog.flush(),
    close: () => accessLog.close(),
  };
}
