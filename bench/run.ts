/**
 * `npm run bench`: Sluice side by side with other limiters, in one process. Prints ratios,
 * not absolute claims: numbers move with the machine and its load.
 *
 *   npm run bench                          # both parts, full size
 *   npm run bench -- --part throughput --tasks 50000 --rounds 3
 *   npm run bench -- --part goodput --minutes 2
 *   npm run bench -- --part goodput --http  # adds the real-HTTP variant (about 3 minutes)
 *
 * 1. Throughput: `governor.run()` (concurrency 8, leases, an RPM gate that never binds,
 *    metrics on) against p-limit, p-queue and async-sema running the same empty async tasks,
 *    all submitted at once (burst), then by 64 callers awaiting one task at a time (steady).
 *    Rounds alternate between contenders; medians are reported.
 * 2. Goodput: a simulated upstream with a hidden concurrency limit and RPM, on a
 *    discrete-event clock; no governor, a fixed limit and Sluice learning face the same
 *    endless backlog. Then issue 20's adaptation table: a steady hard limit, a limit that
 *    halves and one that doubles mid-run, an RPM quota window; Sluice against an oracle
 *    semaphore that knows the limit, simulated (and with --http, over real HTTP on loopback).
 */

import { cpus } from "node:os";
import { parseArgs } from "node:util";
import type { AdaptationResult, AdaptationScenario } from "./adaptation.js";
import {
  ADAPTATION_SCENARIOS,
  realTimeScenarios,
  runAdaptation,
  runStrategy,
  simulatedHarness,
} from "./adaptation.js";
import { formatAdaptation } from "./adaptation-report.js";
import { BENCH_CONCURRENCY, BENCH_RPM, STEADY_CALLERS, steadyContenders } from "./contenders.js";
import { formatGoodput, GOODPUT_SCENARIOS, optimumPerMinute, runGoodput } from "./goodput.js";
import { formatCount } from "./report.js";
import { httpHarness } from "./sim/http-upstream.js";
import { oracleSemaphore } from "./sim/oracle.js";
import { sluiceLearning } from "./sim/strategies.js";
import { formatThroughput, measureThroughput } from "./throughput.js";

const { values } = parseArgs({
  options: {
    part: { type: "string", default: "all" },
    tasks: { type: "string", default: "200000" },
    rounds: { type: "string", default: "5" },
    minutes: { type: "string", default: "10" },
    http: { type: "boolean", default: false },
  },
});

const part = values.part;
const tasks = positiveInteger(values.tasks, "tasks");
const rounds = positiveInteger(values.rounds, "rounds");
const minutes = positiveInteger(values.minutes, "minutes");

console.log(
  `Sluice bench · node ${process.version} · ${cpus().length} CPU(s) · ${new Date().toISOString()}`,
);

if (part === "all" || part === "throughput") {
  console.log(
    `\n## Throughput: ${formatCount(tasks)} empty async tasks per round, submitted at once, ` +
      `concurrency ${BENCH_CONCURRENCY}, median of ${rounds} interleaved rounds`,
  );
  console.log(
    `sluice: run() with leases (default term), rpm ${formatCount(BENCH_RPM)} (never binds), ` +
      "default metrics, queue sized for every task\n",
  );
  const results = await measureThroughput({ tasks, rounds, warmupTasks: Math.min(tasks, 50_000) });
  console.log(formatThroughput(results));
  console.log(
    `\nSteady: the same tasks run by ${STEADY_CALLERS} callers that each await one task at a time ` +
      "(a shallow queue, as in a server)\n",
  );
  const steady = await measureThroughput({
    tasks,
    rounds,
    warmupTasks: Math.min(tasks, 50_000),
    contenders: steadyContenders(),
  });
  console.log(formatThroughput(steady));
}

if (part === "all" || part === "goodput") {
  console.log(
    `\n## Goodput: 64 callers with endless demand; 1 simulated minute of warm-up, then ${minutes} measured`,
  );
  console.log(
    "fixed limit and Sluice's pool: maxConcurrent 32; optimum = min(C × 60 000 / 200 ms, RPM) per minute",
  );
  for (const scenario of GOODPUT_SCENARIOS) {
    const startedAt = performance.now();
    const results = await runGoodput({ ...scenario, durationMs: minutes * 60_000 });
    const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
    console.log(
      `\n### ${scenario.name} (optimum ${formatCount(optimumPerMinute(scenario.limits))}/min; ` +
        `simulated in ${seconds} s)\n`,
    );
    console.log(formatGoodput(results));
  }
  await printAdaptation();
}

async function printAdaptation(): Promise<void> {
  console.log(
    "\n## Adaptation (issue 20): 64 callers, maxConcurrent 32, service 200 ± 100 ms; " +
      "Sluice against an oracle semaphore that knows the limit at every instant",
  );
  console.log(
    "429 share and goodput after the warm-up (1 min; the quota scenario: its first window); " +
      "adapt: drop = first 429 → limit under the new one, rise = change → limit ≥ 90% of the new one\n",
  );
  const startedAt = performance.now();
  const simulated: AdaptationResult[] = [];
  for (const scenario of ADAPTATION_SCENARIOS) {
    simulated.push(...(await runAdaptation(scenario, simulatedHarness)));
  }
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
  console.log(`### Simulated clock (independent of load; simulated in ${seconds} s)\n`);
  console.log(formatAdaptation(simulated));
  if (!values.http) return;
  const scenarios = realTimeScenarios();
  console.log(
    `\n### Real HTTP on loopback, real time (governor.fetch; ${describeRealTime(scenarios)}; ` +
      "all runs at once, so figures move with the machine's load)\n",
  );
  const runs = scenarios.flatMap((scenario) =>
    [oracleSemaphore, sluiceLearning].map((strategy) =>
      runStrategy(scenario, httpHarness(), strategy),
    ),
  );
  console.log(formatAdaptation(await Promise.all(runs)));
}

function describeRealTime(scenarios: readonly AdaptationScenario[]): string {
  const longest = Math.max(
    ...scenarios.map(
      (scenario) =>
        (scenario.warmupMs === "first window" ? 60_000 : scenario.warmupMs) + scenario.durationMs,
    ),
  );
  return `warm-up 15 s, changes 60 s in, about ${Math.round(longest / 1000)} s in all`;
}

function positiveInteger(text: string, name: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) {
    console.error(`--${name} must be a positive integer, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}
