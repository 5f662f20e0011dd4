import { formatCount, formatPercent, formatTable } from "./report.js";
import { EventClock } from "./sim/event-clock.js";
import { seededRandom } from "./sim/random.js";
import type { Strategy, StrategyNotes } from "./sim/strategies.js";
import { fixedLimit, noGovernor, sluiceLearning } from "./sim/strategies.js";
import type { UpstreamLimits, UpstreamTally } from "./sim/upstream.js";
import { SimulatedUpstream } from "./sim/upstream.js";

/** One simulated situation: a hidden upstream and a backlog of callers. */
export interface GoodputScenario {
  name: string;
  limits: UpstreamLimits;
  /** Callers that always want another call: far more demand than the upstream allows. */
  callers: number;
  /** Ceiling of the fixed limit and of Sluice's pool (what an operator would configure). */
  maxConcurrent: number;
  /**
   * Simulated time before measuring. The upstream starts with a full bucket, a one-off
   * burst of `rpm` calls that a steady rate never sees again; the warm-up spends it, and is
   * where Sluice learns. Its 429s are reported on their own.
   */
  warmupMs: number;
  /** Simulated time measured after the warm-up. */
  durationMs: number;
  seed: number;
}

/** How one strategy fared in one scenario. */
export interface GoodputResult {
  scenario: string;
  strategy: string;
  /** Successful calls within the period. */
  ok: number;
  /** Calls answered 429 within the period. */
  throttled: number;
  /** Successful calls per simulated minute. */
  goodputPerMinute: number;
  /** The most the upstream can serve per minute: min(C × 60 000 / mean service ms, RPM). */
  optimumPerMinute: number;
  /** goodput ÷ optimum. */
  shareOfOptimum: number;
  /** 429s ÷ all answers. */
  throttledShare: number;
  /** Most calls the upstream served at once, warm-up included. */
  peakConcurrency: number;
  /** Calls answered 429 during the warm-up. */
  warmupThrottled: number;
  notes: StrategyNotes;
}

const SHARED = {
  callers: 64,
  maxConcurrent: 32,
  warmupMs: 60_000,
  durationMs: 10 * 60_000,
} as const;
const SERVICE = { meanServiceMs: 200, serviceSpreadMs: 100, throttleLatencyMs: 10 } as const;

/**
 * The hidden RPM binds: 12 concurrent × 200 ms could serve 3 600 calls a minute, the bucket
 * allows 600.
 */
export const RPM_BOUND: GoodputScenario = {
  name: "RPM-bound: C=12, 600 rpm, retry-after-ms hints",
  limits: { concurrency: 12, rpm: 600, ...SERVICE, retryHints: "milliseconds" },
  ...SHARED,
  seed: 1,
};

/** The hidden concurrency binds: 12 × 200 ms = 3 600 calls a minute, under a 6 000 rpm bucket. */
export const CONCURRENCY_BOUND: GoodputScenario = {
  name: "concurrency-bound: C=12, 6 000 rpm, retry-after-ms hints",
  limits: { concurrency: 12, rpm: 6_000, ...SERVICE, retryHints: "milliseconds" },
  ...SHARED,
  seed: 2,
};

/** As {@link CONCURRENCY_BOUND}, but 429s say only `retry-after` in whole seconds, as most APIs do. */
export const COARSE_HINTS: GoodputScenario = {
  name: "concurrency-bound: C=12, 6 000 rpm, whole-second Retry-After",
  limits: { concurrency: 12, rpm: 6_000, ...SERVICE, retryHints: "seconds" },
  ...SHARED,
  seed: 3,
};

/** Every scenario `npm run bench` prints. */
export const GOODPUT_SCENARIOS: readonly GoodputScenario[] = [
  RPM_BOUND,
  CONCURRENCY_BOUND,
  COARSE_HINTS,
];

/** The three strategies compared, in the order printed. */
export const GOODPUT_STRATEGIES: readonly Strategy[] = [noGovernor, fixedLimit, sluiceLearning];

/**
 * The most successful calls per minute the upstream can give: its concurrency times the
 * calls one slot completes a minute, or its RPM, whichever is lower.
 *
 * @example
 * ```ts
 * optimumPerMinute(RPM_BOUND.limits); // 600
 * ```
 */
export function optimumPerMinute(limits: UpstreamLimits): number {
  return Math.min((limits.concurrency * 60_000) / limits.meanServiceMs, limits.rpm);
}

/**
 * Runs each strategy against a fresh copy of the scenario's upstream on a discrete-event
 * clock (no real sleeps: ten simulated minutes take a second or two) and measures goodput
 * and 429s after the warm-up.
 *
 * @example
 * ```ts
 * const results = await runGoodput({ ...RPM_BOUND, warmupMs: 30_000, durationMs: 120_000 });
 * console.log(formatGoodput(results));
 * ```
 */
export async function runGoodput(
  scenario: GoodputScenario,
  strategies: readonly Strategy[] = GOODPUT_STRATEGIES,
): Promise<GoodputResult[]> {
  const results: GoodputResult[] = [];
  for (const strategy of strategies) results.push(await simulate(scenario, strategy));
  return results;
}

async function simulate(scenario: GoodputScenario, strategy: Strategy): Promise<GoodputResult> {
  const clock = new EventClock();
  const upstream = new SimulatedUpstream(clock, scenario.limits, seededRandom(scenario.seed));
  let running = true;
  const { finish } = strategy.start({
    clock,
    upstream,
    call: () => upstream.call(),
    callers: scenario.callers,
    maxConcurrent: scenario.maxConcurrent,
    running: () => running,
  });
  await clock.runFor(scenario.warmupMs);
  const atWarmupEnd = { ...upstream.tally };
  await clock.runFor(scenario.durationMs);
  running = false;
  const notes = await finish();
  const { tally } = upstream;
  const ok = tally.ok - atWarmupEnd.ok;
  const throttled = throttledCalls(tally) - throttledCalls(atWarmupEnd);
  const minutes = scenario.durationMs / 60_000;
  const optimum = optimumPerMinute(scenario.limits);
  return {
    scenario: scenario.name,
    strategy: strategy.name,
    ok,
    throttled,
    goodputPerMinute: ok / minutes,
    optimumPerMinute: optimum,
    shareOfOptimum: ok / minutes / optimum,
    throttledShare: ok + throttled === 0 ? 0 : throttled / (ok + throttled),
    peakConcurrency: tally.peakConcurrency,
    warmupThrottled: throttledCalls(atWarmupEnd),
    notes,
  };
}

function throttledCalls(tally: UpstreamTally): number {
  return tally.throttledConcurrency + tally.throttledRate;
}

/**
 * One scenario's results as a table: goodput per minute after the warm-up, its share of the
 * optimum, the share of calls answered 429, the upstream's peak concurrency, the warm-up's
 * 429s, and what Sluice learned.
 *
 * @example
 * ```ts
 * console.log(formatGoodput(await runGoodput(RPM_BOUND)));
 * ```
 */
export function formatGoodput(results: readonly GoodputResult[]): string {
  const rows = results.map((result) => [
    result.strategy,
    formatCount(result.goodputPerMinute),
    formatPercent(result.shareOfOptimum),
    formatPercent(result.throttledShare),
    formatCount(result.ok),
    formatCount(result.throttled),
    String(result.peakConcurrency),
    formatCount(result.warmupThrottled),
    learnedNote(result.notes),
  ]);
  return formatTable(
    [
      "strategy",
      "ok/min",
      "of optimum",
      "429 share",
      "ok",
      "429s",
      "peak conc.",
      "warm-up 429s",
      "learned",
    ],
    rows,
    ["left", "right", "right", "right", "right", "right", "right", "right", "left"],
  );
}

function learnedNote(notes: StrategyNotes): string {
  if (!("learnedConcurrency" in notes)) return "";
  const concurrency = notes.learnedConcurrency ?? "max";
  const rpm = notes.learnedRpm ?? "none";
  return `concurrency ${concurrency}, rpm ${rpm}`;
}
