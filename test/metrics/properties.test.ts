import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MetricCounts, PoolMeter } from "../../src/metrics/index.js";
import { emptyMetricCounts, MetricsRecorder } from "../../src/metrics/index.js";

const MINUTE = 60_000;
const T0 = 1_700_000_040_000;
const SPAN_MINUTES = 20;

type EventKind =
  | "request"
  | "admitted"
  | "queued"
  | "rejected"
  | "timedOut"
  | "throttled"
  | "released";

interface Event {
  kind: EventKind;
  offsetMs: number;
  amount: number;
}

const eventArbitrary: fc.Arbitrary<Event> = fc.record({
  kind: fc.constantFrom<EventKind>(
    "request",
    "admitted",
    "queued",
    "rejected",
    "timedOut",
    "throttled",
    "released",
  ),
  offsetMs: fc.integer({ min: 0, max: SPAN_MINUTES * MINUTE - 1 }),
  amount: fc.integer({ min: 0, max: 5_000 }),
});

function record(meter: PoolMeter, event: Event): void {
  const now = T0 + event.offsetMs;
  if (event.kind === "admitted") meter.admitted(now, event.amount);
  else if (event.kind === "throttled") meter.throttled(now, event.amount);
  else if (event.kind === "released") meter.released(now, event.amount);
  else meter[event.kind](now);
}

/** The obviously-correct model: count the events whose minute lies in [from, to). */
function modelTotals(events: Event[], fromMs: number, toMs: number): MetricCounts {
  const sum = emptyMetricCounts();
  for (const event of events) {
    const now = T0 + event.offsetMs;
    if (now < fromMs || now >= toMs) continue;
    if (event.kind === "request") sum.requests++;
    else if (event.kind === "admitted") {
      sum.admitted++;
      sum.queueWaitMs += event.amount;
    } else if (event.kind === "throttled") sum.throttled += event.amount;
    else if (event.kind === "released") {
      sum.released++;
      sum.holdMs += event.amount;
    } else sum[event.kind]++;
  }
  return sum;
}

function addCounts(left: MetricCounts, right: MetricCounts): MetricCounts {
  const sum = emptyMetricCounts();
  for (const field of Object.keys(sum) as (keyof MetricCounts)[]) {
    sum[field] = left[field] + right[field];
  }
  return sum;
}

const alignedCuts = fc
  .uniqueArray(fc.integer({ min: 0, max: SPAN_MINUTES }), { minLength: 3, maxLength: 3 })
  .map((minutes) => minutes.sort((x, y) => x - y).map((minute) => T0 + minute * MINUTE));

describe("MetricsRecorder properties", () => {
  it("totals over [a,b) plus [b,c) equal totals over [a,c) for aligned a < b < c", () => {
    fc.assert(
      fc.property(fc.array(eventArbitrary, { maxLength: 200 }), alignedCuts, (events, cuts) => {
        const [a, b, c] = cuts as [number, number, number];
        const recorder = new MetricsRecorder();
        const meter = recorder.forPool("llm");
        for (const event of events) record(meter, event);
        const split = addCounts(recorder.totals("llm", a, b), recorder.totals("llm", b, c));
        expect(split).toEqual(recorder.totals("llm", a, c));
        expect(recorder.totals("llm", a, c)).toEqual(modelTotals(events, a, c));
      }),
    );
  });

  it("every event lands in exactly one drained bucket, whatever the event order", () => {
    fc.assert(
      fc.property(fc.array(eventArbitrary, { maxLength: 200 }), (events) => {
        const recorder = new MetricsRecorder();
        const meter = recorder.forPool("llm");
        for (const event of events) record(meter, event);
        const drained = recorder.drainDirty();
        const starts = drained.map((bucket) => bucket.start);
        expect(new Set(starts).size).toBe(starts.length);
        const sum = drained.reduce<MetricCounts>(
          (total, bucket) => addCounts(total, bucket),
          emptyMetricCounts(),
        );
        expect(sum).toEqual(modelTotals(events, T0, T0 + SPAN_MINUTES * MINUTE));
      }),
    );
  });
});
