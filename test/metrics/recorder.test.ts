import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import type { MetricsBucket } from "../../src/metrics/index.js";
import { emptyMetricCounts, MetricsRecorder } from "../../src/metrics/index.js";

const MINUTE = 60_000;
const T0 = 1_700_000_040_000; // a minute boundary

function bucket(pool: string, start: number, counts: Partial<MetricsBucket> = {}): MetricsBucket {
  return { ...emptyMetricCounts(), pool, start, ...counts };
}

/** One request in each of minutes 0..4 after T0, n+1 requests in minute n. */
function recorderWithFiveMinutes(): MetricsRecorder {
  const recorder = new MetricsRecorder();
  const meter = recorder.forPool("llm");
  for (let minute = 0; minute < 5; minute++) {
    for (let count = 0; count <= minute; count++) meter.request(T0 + minute * MINUTE + 1_000);
  }
  return recorder;
}

describe("MetricsRecorder construction", () => {
  it("defaults to per-minute buckets", () => {
    expect(new MetricsRecorder().bucketMs).toBe(MINUTE);
  });

  it.each([0, -1, 1.5, Number.NaN])("rejects bucketMs %s", (bucketMs) => {
    expect(() => new MetricsRecorder({ bucketMs })).toThrow(InvalidArgumentError);
  });

  it("refuses a misspelt option instead of quietly using the default", () => {
    const misspelt = { bucketMS: 1_000 } as unknown as { bucketMs: number };
    expect(() => new MetricsRecorder(misspelt)).toThrow(
      new InvalidArgumentError(
        'Unknown MetricsRecorder option "bucketMS" (known: bucketMs, observer).',
      ),
    );
    expect(new MetricsRecorder({ bucketMs: 1_000, observer: {} }).bucketMs).toBe(1_000);
  });
});

describe("MetricsRecorder.totals and buckets", () => {
  it("sums the buckets whose start is in [floor(from), to)", () => {
    const recorder = recorderWithFiveMinutes();
    expect(recorder.totals("llm", T0, T0 + 5 * MINUTE).requests).toBe(15);
    expect(recorder.totals("llm", T0 + MINUTE, T0 + 3 * MINUTE).requests).toBe(2 + 3);
    // from inside minute 1 rounds down to include all of minute 1
    expect(recorder.totals("llm", T0 + MINUTE + 59_000, T0 + 2 * MINUTE).requests).toBe(2);
    // to is exclusive: a bucket starting exactly at `to` is left out...
    expect(recorder.totals("llm", T0, T0 + MINUTE).requests).toBe(1);
    // ...but one starting before `to` counts whole even if `to` cuts it
    expect(recorder.totals("llm", T0, T0 + MINUTE + 1).requests).toBe(1 + 2);
  });

  it("answers zeros for an unknown pool, an empty range and a reversed range", () => {
    const recorder = recorderWithFiveMinutes();
    expect(recorder.totals("nope", T0, T0 + 5 * MINUTE)).toEqual(emptyMetricCounts());
    expect(recorder.totals("llm", T0 + MINUTE, T0 + MINUTE)).toEqual(emptyMetricCounts());
    expect(recorder.totals("llm", T0 + 2 * MINUTE, T0)).toEqual(emptyMetricCounts());
    expect(recorder.totals("llm", Number.NaN, T0 + 5 * MINUTE)).toEqual(emptyMetricCounts());
    expect(recorder.buckets("llm", T0 + 2 * MINUTE, T0)).toEqual([]);
  });

  it("lists copies, oldest first, that do not alias the live counts", () => {
    const recorder = recorderWithFiveMinutes();
    const listed = recorder.buckets("llm", T0 + MINUTE, T0 + 3 * MINUTE);
    expect(listed).toEqual([
      bucket("llm", T0 + MINUTE, { requests: 2 }),
      bucket("llm", T0 + 2 * MINUTE, { requests: 3 }),
    ]);
    listed[0]!.requests = 999;
    expect(recorder.totals("llm", T0 + MINUTE, T0 + 2 * MINUTE).requests).toBe(2);
  });
});

describe("MetricsRecorder.drainDirty", () => {
  it("returns each changed bucket once, then nothing until something changes", () => {
    const recorder = new MetricsRecorder();
    const llm = recorder.forPool("llm");
    const search = recorder.forPool("search");
    llm.request(T0);
    llm.request(T0 + 1);
    llm.admitted(T0 + 2, 0);
    llm.request(T0 + MINUTE);
    search.rejected(T0 + 3);

    expect(recorder.drainDirty()).toEqual([
      bucket("llm", T0, { requests: 2, admitted: 1 }),
      bucket("llm", T0 + MINUTE, { requests: 1 }),
      bucket("search", T0, { rejected: 1 }),
    ]);
    expect(recorder.drainDirty()).toEqual([]);
  });

  it("returns a bucket again, with its cumulative counts, after a further change", () => {
    const recorder = new MetricsRecorder();
    const llm = recorder.forPool("llm");
    llm.request(T0);
    recorder.drainDirty();
    llm.request(T0 + 10);
    llm.released(T0 + 20, 300);
    expect(recorder.drainDirty()).toEqual([
      bucket("llm", T0, { requests: 2, released: 1, holdMs: 300 }),
    ]);
    expect(recorder.drainDirty()).toEqual([]);
  });
});

describe("MetricsRecorder.load", () => {
  it("replaces counts of the same pool and start, and later events add to them", () => {
    const recorder = new MetricsRecorder();
    const meter = recorder.forPool("llm");
    meter.request(T0);
    meter.request(T0);
    recorder.load([
      bucket("llm", T0, { requests: 10, admitted: 7 }),
      bucket("llm", T0 - MINUTE, { requests: 4 }),
      bucket("other", T0, { queued: 2 }),
    ]);
    expect(recorder.totals("llm", T0, T0 + MINUTE)).toMatchObject({ requests: 10, admitted: 7 });
    meter.request(T0 + 1);
    expect(recorder.buckets("llm", T0 - MINUTE, T0 + MINUTE)).toEqual([
      bucket("llm", T0 - MINUTE, { requests: 4 }),
      bucket("llm", T0, { requests: 11, admitted: 7 }),
    ]);
    expect(recorder.totals("other", T0, T0 + MINUTE).queued).toBe(2);
  });

  it("does not mark loaded buckets dirty", () => {
    const recorder = new MetricsRecorder();
    recorder.load([bucket("llm", T0, { requests: 3 })]);
    expect(recorder.drainDirty()).toEqual([]);
  });

  it("rejects a misaligned start or a bad count and applies nothing", () => {
    const recorder = new MetricsRecorder();
    const good = bucket("llm", T0, { requests: 3 });
    expect(() => recorder.load([good, bucket("llm", T0 + 1)])).toThrow(InvalidArgumentError);
    expect(() => recorder.load([good, bucket("llm", T0, { holdMs: -1 })])).toThrow(
      InvalidArgumentError,
    );
    expect(() => recorder.load([good, bucket("llm", T0, { requests: Number.NaN })])).toThrow(
      InvalidArgumentError,
    );
    expect(recorder.totals("llm", T0, T0 + MINUTE).requests).toBe(0);
  });
});

describe("MetricsRecorder.prune", () => {
  it("drops the buckets that end at or before the cut-off, in every pool", () => {
    const recorder = recorderWithFiveMinutes();
    recorder.forPool("other").request(T0);
    // minute 1 ends at T0 + 2 min, before T0 + 2 min + 1 s; minute 2 is still open then
    expect(recorder.prune(T0 + 2 * MINUTE + 1_000)).toBe(2 + 1);
    expect(recorder.buckets("llm", 0, Number.POSITIVE_INFINITY).map((b) => b.start)).toEqual([
      T0 + 2 * MINUTE,
      T0 + 3 * MINUTE,
      T0 + 4 * MINUTE,
    ]);
    expect(recorder.totals("other", 0, Number.POSITIVE_INFINITY).requests).toBe(0);
    expect(recorder.prune(T0 + 2 * MINUTE + 1_000)).toBe(0);
  });

  it("drops a bucket whose end equals the cut-off", () => {
    const recorder = recorderWithFiveMinutes();
    expect(recorder.prune(T0 + MINUTE)).toBe(1);
    expect(recorder.totals("llm", 0, Number.POSITIVE_INFINITY).requests).toBe(15 - 1);
  });

  it("keeps pruned buckets out of the next drain", () => {
    const recorder = new MetricsRecorder();
    const meter = recorder.forPool("llm");
    meter.request(T0);
    meter.request(T0 + MINUTE);
    recorder.prune(T0 + MINUTE);
    expect(recorder.drainDirty()).toEqual([bucket("llm", T0 + MINUTE, { requests: 1 })]);
  });

  it("lets a meter keep recording after its current bucket was pruned", () => {
    const recorder = new MetricsRecorder();
    const meter = recorder.forPool("llm");
    meter.request(T0);
    recorder.drainDirty();
    recorder.prune(T0 + MINUTE);
    meter.request(T0 + 1); // a late event stamped in the pruned minute
    expect(recorder.buckets("llm", 0, Number.POSITIVE_INFINITY)).toEqual([
      bucket("llm", T0, { requests: 1 }),
    ]);
    expect(recorder.drainDirty()).toEqual([bucket("llm", T0, { requests: 1 })]);
  });
});
