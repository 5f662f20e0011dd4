/**
 * Cost of the governor's per-acquire metrics calls: `request` + `admitted` + `released` on a
 * cached PoolMeter. Time advances 1 ms per iteration, so a new minute bucket starts every
 * 60 000 iterations, as it would under ~1 000 acquires per second.
 *
 * Run: `npx tsx bench/metrics-hot-path.ts`. Not a test; numbers vary by machine.
 */

import type { PoolMeter } from "../src/metrics/index.js";
import { MetricsRecorder } from "../src/metrics/index.js";

const ITERATIONS = 5_000_000;
const START = 1_700_000_040_000;

function runOnce(meter: PoolMeter, iterations: number, startMs: number): bigint {
  const began = process.hrtime.bigint();
  for (let index = 0; index < iterations; index++) {
    const now = startMs + index;
    meter.request(now);
    meter.admitted(now, 0);
    meter.released(now, 120);
  }
  return process.hrtime.bigint() - began;
}

function measure(label: string, recorder: MetricsRecorder, meter: PoolMeter): void {
  runOnce(meter, 200_000, START - 10 * 60_000); // warm-up so the JIT has optimised the path
  recorder.drainDirty();
  const elapsedNs = Number(runOnce(meter, ITERATIONS, START));
  const dirty = recorder.drainDirty().length;
  const perIteration = elapsedNs / ITERATIONS;
  console.log(
    `${label}: ${perIteration.toFixed(1)} ns per request+admitted+released ` +
      `(${(perIteration / 3).toFixed(1)} ns per call), ${dirty} buckets touched`,
  );
}

const recorder = new MetricsRecorder();
measure("one pool", recorder, recorder.forPool("llm"));

// Many pools alive at once: the hot path should not care how many there are.
const crowded = new MetricsRecorder();
for (let pool = 0; pool < 1_000; pool++) crowded.forPool(`pool-${pool}`).request(START);
measure("1 000 pools", crowded, crowded.forPool("pool-500"));
