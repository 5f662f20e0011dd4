import { describe, expect, it } from "vitest";
import type { MetricCounts, PoolMeter } from "../../src/metrics/index.js";
import { MetricsRecorder } from "../../src/metrics/index.js";

const MINUTE = 60_000;
const T0 = 1_700_000_040_000; // a minute boundary (28 333 334 × 60 000)

function everything(recorder: MetricsRecorder, pool: string): MetricCounts {
  return recorder.totals(pool, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY);
}

describe("PoolMeter counting", () => {
  const cases: [string, (meter: PoolMeter, now: number) => void, Partial<MetricCounts>][] = [
    ["request", (m, now) => m.request(now), { requests: 1 }],
    ["admitted at once", (m, now) => m.admitted(now, 0), { admitted: 1 }],
    ["admitted after a wait", (m, now) => m.admitted(now, 250), { admitted: 1, queueWaitMs: 250 }],
    ["queued", (m, now) => m.queued(now), { queued: 1 }],
    ["rejected", (m, now) => m.rejected(now), { rejected: 1 }],
    ["timedOut", (m, now) => m.timedOut(now), { timedOut: 1 }],
    ["throttled", (m, now) => m.throttled(now, 3), { throttled: 3 }],
    ["released", (m, now) => m.released(now, 1_200), { released: 1, holdMs: 1_200 }],
  ];

  it.each(cases)("%s changes only its own fields", (_name, record, expected) => {
    const recorder = new MetricsRecorder();
    record(recorder.forPool("llm"), T0 + 5);
    expect(everything(recorder, "llm")).toEqual({
      requests: 0,
      admitted: 0,
      queued: 0,
      rejected: 0,
      timedOut: 0,
      throttled: 0,
      released: 0,
      queueWaitMs: 0,
      holdMs: 0,
      ...expected,
    });
  });

  it("accumulates repeated events and keeps pools apart", () => {
    const recorder = new MetricsRecorder();
    const llm = recorder.forPool("llm");
    const search = recorder.forPool("search");
    for (let index = 0; index < 5; index++) {
      llm.request(T0 + index);
      llm.admitted(T0 + index, 10);
      llm.released(T0 + index, 100);
    }
    search.request(T0);
    expect(everything(recorder, "llm")).toMatchObject({
      requests: 5,
      admitted: 5,
      queueWaitMs: 50,
      released: 5,
      holdMs: 500,
    });
    expect(everything(recorder, "search").requests).toBe(1);
  });

  it("returns the same meter for the same pool", () => {
    const recorder = new MetricsRecorder();
    expect(recorder.forPool("llm")).toBe(recorder.forPool("llm"));
    expect(recorder.forPool("llm")).not.toBe(recorder.forPool("other"));
    expect(recorder.forPool("llm").pool).toBe("llm");
  });
});

describe("PoolMeter bucket rotation", () => {
  it("starts a new bucket exactly at the minute boundary", () => {
    const recorder = new MetricsRecorder();
    const meter = recorder.forPool("llm");
    meter.request(T0);
    meter.request(T0 + MINUTE - 1);
    meter.request(T0 + MINUTE);
    meter.request(T0 + 3 * MINUTE + 59_999);
    const buckets = recorder.buckets("llm", T0, T0 + 10 * MINUTE);
    expect(buckets.map((bucket) => [bucket.start, bucket.requests])).toEqual([
      [T0, 2],
      [T0 + MINUTE, 1],
      [T0 + 3 * MINUTE, 1],
    ]);
  });

  it("writes an event stamped in an earlier minute into that minute's bucket", () => {
    const recorder = new MetricsRecorder();
    const meter = recorder.forPool("llm");
    meter.request(T0 + 2 * MINUTE);
    meter.request(T0 + 10); // clock stepped back
    meter.request(T0 + 2 * MINUTE + 1);
    const buckets = recorder.buckets("llm", T0, T0 + 10 * MINUTE);
    expect(buckets.map((bucket) => [bucket.start, bucket.requests])).toEqual([
      [T0, 1],
      [T0 + 2 * MINUTE, 2],
    ]);
  });

  it("honours a custom bucket width", () => {
    const recorder = new MetricsRecorder({ bucketMs: 1_000 });
    const meter = recorder.forPool("llm");
    meter.request(T0 + 999);
    meter.request(T0 + 1_000);
    expect(recorder.bucketMs).toBe(1_000);
    expect(recorder.buckets("llm", T0, T0 + MINUTE).map((bucket) => bucket.start)).toEqual([
      T0,
      T0 + 1_000,
    ]);
  });
});

describe("MetricsRecorder.removePool", () => {
  it("forgets the pool; the old meter records nothing and a new one starts empty", () => {
    const recorder = new MetricsRecorder();
    const old = recorder.forPool("llm");
    old.request(T0);
    recorder.drainDirty();
    recorder.removePool("llm");
    old.request(T0 + 1);
    old.request(T0 + 5 * MINUTE);
    expect(everything(recorder, "llm").requests).toBe(0);
    expect(recorder.drainDirty()).toEqual([]);

    const fresh = recorder.forPool("llm");
    expect(fresh).not.toBe(old);
    fresh.request(T0 + 2);
    expect(everything(recorder, "llm").requests).toBe(1);
  });

  it("still hands buckets changed before the removal to the next drain", () => {
    const recorder = new MetricsRecorder();
    recorder.forPool("llm").request(T0);
    recorder.removePool("llm");
    expect(recorder.drainDirty()).toMatchObject([{ pool: "llm", start: T0, requests: 1 }]);
  });
});
