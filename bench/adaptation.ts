import { EventClock } from "./sim/event-clock.js";
import { oracleSemaphore } from "./sim/oracle.js";
import { seededRandom } from "./sim/random.js";
import type { BenchClock, StartedStrategy, Strategy } from "./sim/strategies.js";
import { sluiceLearning } from "./sim/strategies.js";
import type { UpstreamAnswer, UpstreamLimits, UpstreamTally } from "./sim/upstream.js";
import { SimulatedUpstream } from "./sim/upstream.js";

/** What issue 20's table asks of each kind of scenario. */
export type AdaptationKind = "steady" | "drop" | "rise" | "quota";

/** One situation of the adaptation table: an upstream whose limits Sluice must find. */
export interface AdaptationScenario {
  name: string;
  kind: AdaptationKind;
  limits: UpstreamLimits;
  callers: number;
  maxConcurrent: number;
  /**
   * Time before measuring goodput and 429s ("first window": until the upstream's first quota
   * window ends, so every 429 after the discovery counts).
   */
  warmupMs: number | "first window";
  /** Time measured after the warm-up. */
  durationMs: number;
  seed: number;
}

/** How one strategy fared in one scenario. */
export interface AdaptationResult {
  scenario: AdaptationScenario;
  strategy: string;
  /** Successful calls after the warm-up. */
  ok: number;
  /** 429s after the warm-up. */
  throttled: number;
  /** 429s during the warm-up. */
  warmupThrottled: number;
  /**
   * Drop: ms from the first 429 after the change until the strategy's limit is at or under
   * the new one. Rise: ms from the change until its limit reaches 90% of the new one. Null:
   * never (or not measured).
   */
  adaptMs: number | null;
  /** The strategy's concurrency limit at the end. */
  finalLimit: number | null;
}

const SERVICE = {
  meanServiceMs: 200,
  serviceSpreadMs: 100,
  throttleLatencyMs: 10,
  retryHints: "milliseconds",
} as const;
const SHARED = { callers: 64, maxConcurrent: 32, warmupMs: 60_000 } as const;
/** The change comes two minutes after the warm-up: probes at the old level have backed off to the cap. */
const CHANGE_AFTER_MS = 180_000;

/**
 * Issue 20's four scenarios. A concurrency 429 reports room left in the request window
 * (`x-ratelimit-remaining-requests` > 0), as LLM APIs do for concurrency throttles.
 */
export const ADAPTATION_SCENARIOS: readonly AdaptationScenario[] = [
  {
    name: "steady hard limit C=5",
    kind: "steady",
    limits: { concurrency: 5, rpm: 6_000, ...SERVICE },
    ...SHARED,
    durationMs: 10 * 60_000,
    seed: 11,
  },
  {
    name: "limit halves 16 → 8",
    kind: "drop",
    limits: {
      concurrency: 16,
      rpm: 60_000,
      ...SERVICE,
      change: { afterMs: CHANGE_AFTER_MS, concurrency: 8 },
    },
    ...SHARED,
    durationMs: 5 * 60_000,
    seed: 12,
  },
  {
    name: "limit doubles 8 → 16",
    kind: "rise",
    limits: {
      concurrency: 8,
      rpm: 60_000,
      ...SERVICE,
      change: { afterMs: CHANGE_AFTER_MS, concurrency: 16 },
    },
    ...SHARED,
    durationMs: 5 * 60_000,
    seed: 13,
  },
  {
    name: "RPM quota window 600/min",
    kind: "quota",
    limits: { concurrency: 64, rpm: 600, ...SERVICE, quota: "window" },
    ...SHARED,
    warmupMs: "first window",
    durationMs: 10 * 60_000,
    seed: 14,
  },
];

/**
 * The scenarios shortened for real time (the HTTP variant): a shorter warm-up and the change
 * a minute in; probes at the old level have backed off less far by then.
 *
 * @example
 * ```ts
 * const scenarios = realTimeScenarios();
 * ```
 */
export function realTimeScenarios(): AdaptationScenario[] {
  return ADAPTATION_SCENARIOS.map((scenario) => {
    const { change } = scenario.limits;
    return {
      ...scenario,
      limits: change
        ? { ...scenario.limits, change: { ...change, afterMs: 60_000 } }
        : scenario.limits,
      warmupMs: scenario.warmupMs === "first window" ? "first window" : 15_000,
      // Whole quota windows: the oracle and a sliding gate then each get the same number.
      durationMs: scenario.kind === "quota" ? 120_000 : change ? 105_000 : 60_000,
    };
  });
}

/** Sampling period of the strategies' limits (adaptation times are this precise). */
const SAMPLE_MS = 50;

/** Where the strategies run: an upstream on a simulated clock, or one served over HTTP. */
export interface Harness {
  clock: BenchClock;
  /** The upstream for one strategy's run, and how to call it. */
  upstream(limits: UpstreamLimits, seed: number): Promise<HarnessUpstream>;
  /** Lets `ms` pass (simulated: run the events; real: sleep). */
  pass(ms: number): Promise<void>;
}

/** One strategy's upstream. */
export interface HarnessUpstream {
  upstream: SimulatedUpstream;
  call(): Promise<UpstreamAnswer>;
  url?: string;
  close(): Promise<void>;
}

/**
 * The simulated harness: a discrete-event clock, so results do not depend on the machine's
 * load (ten simulated minutes take seconds).
 *
 * @example
 * ```ts
 * const results = await runAdaptation(ADAPTATION_SCENARIOS[0]!, simulatedHarness());
 * ```
 */
export function simulatedHarness(): Harness {
  const clock = new EventClock();
  return {
    clock,
    async upstream(limits, seed) {
      const upstream = new SimulatedUpstream(clock, limits, seededRandom(seed));
      return { upstream, call: () => upstream.call(), close: async () => {} };
    },
    pass: (ms) => clock.runFor(ms),
  };
}

/**
 * Runs the oracle and Sluice through one scenario, each against a fresh upstream. A new
 * harness per scenario: the simulated clock must not carry another run's timers.
 *
 * @example
 * ```ts
 * for (const scenario of ADAPTATION_SCENARIOS) results.push(...(await runAdaptation(scenario, simulatedHarness())));
 * ```
 */
export async function runAdaptation(
  scenario: AdaptationScenario,
  makeHarness: () => Harness,
  strategies: readonly Strategy[] = [oracleSemaphore, sluiceLearning],
): Promise<AdaptationResult[]> {
  const results: AdaptationResult[] = [];
  for (const strategy of strategies) {
    results.push(await runStrategy(scenario, makeHarness(), strategy));
  }
  return results;
}

/**
 * One strategy through one scenario on a harness of its own.
 *
 * @example
 * ```ts
 * const result = await runStrategy(scenario, httpHarness(), sluiceLearning);
 * ```
 */
export async function runStrategy(
  scenario: AdaptationScenario,
  harness: Harness,
  strategy: Strategy,
): Promise<AdaptationResult> {
  const { clock } = harness;
  const target = await harness.upstream(scenario.limits, scenario.seed);
  const { upstream } = target;
  let running = true;
  const started = strategy.start({
    clock,
    upstream,
    call: target.call,
    ...(target.url === undefined ? {} : { url: target.url }),
    callers: scenario.callers,
    maxConcurrent: scenario.maxConcurrent,
    running: () => running,
  });
  const samples = sampleLimits(clock, started, () => running);
  const warmupMs =
    scenario.warmupMs === "first window" ? upstream.msUntilQuota() : scenario.warmupMs;
  await harness.pass(warmupMs);
  const atWarmupEnd = { ...upstream.tally };
  await harness.pass(scenario.durationMs);
  running = false;
  const finalLimit = (await started.limitNow?.()) ?? null;
  await started.finish();
  await target.close();
  const { tally } = upstream;
  return {
    scenario,
    strategy: strategy.name,
    ok: tally.ok - atWarmupEnd.ok,
    throttled: throttledCalls(tally) - throttledCalls(atWarmupEnd),
    warmupThrottled: throttledCalls(atWarmupEnd),
    adaptMs: adaptation(scenario, upstream.changeAt, tally, samples),
    finalLimit,
  };
}

interface Sample {
  at: number;
  limit: number;
}

/** Samples the strategy's limit every SAMPLE_MS while it runs. */
function sampleLimits(
  clock: BenchClock,
  started: StartedStrategy,
  running: () => boolean,
): Sample[] {
  const samples: Sample[] = [];
  const limitNow = started.limitNow;
  if (limitNow === undefined) return samples;
  const tick = () => {
    if (!running()) return;
    const at = clock.now();
    void limitNow().then((limit) => samples.push({ at, limit }));
    clock.setTimeout(tick, SAMPLE_MS);
  };
  tick();
  return samples;
}

function adaptation(
  scenario: AdaptationScenario,
  changeAt: number | null,
  tally: UpstreamTally,
  samples: readonly Sample[],
): number | null {
  const change = scenario.limits.change;
  if (change === undefined || changeAt === null) return null;
  if (scenario.kind === "drop") {
    const from = tally.firstThrottleAfterChange;
    if (from === null) return null;
    const under = samples.find((sample) => sample.at >= from && sample.limit <= change.concurrency);
    return under === undefined ? null : under.at - from;
  }
  const goal = Math.ceil(0.9 * change.concurrency);
  const reached = samples.find((sample) => sample.at >= changeAt && sample.limit >= goal);
  return reached === undefined ? null : reached.at - changeAt;
}

function throttledCalls(tally: UpstreamTally): number {
  return tally.throttledConcurrency + tally.throttledRate;
}
