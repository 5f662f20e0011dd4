import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { MetricsRecorder, summarizePoolMetrics } from "../../src/metrics/index.js";

const MINUTE = 60_000;
const DAY = 86_400_000;
const NOW = 1_700_000_040_000 + 30 * MINUTE + 15_000; // mid-minute
const iso = (ms: number) => new Date(ms).toISOString();
const minuteStart = (ms: number) => Math.floor(ms / MINUTE) * MINUTE;

/** Requests spread over time: 1 just outside retention, 2 a day ago, 3 a minute ago, 4 now. */
function recorderWithHistory(): MetricsRecorder {
  const recorder = new MetricsRecorder();
  const meter = recorder.forPool("llm");
  const at = (ms: number, count: number) => {
    for (let index = 0; index < count; index++) meter.request(ms);
  };
  at(NOW - 7 * DAY - 10 * MINUTE, 1);
  at(NOW - DAY, 2);
  at(NOW - MINUTE, 3);
  at(NOW, 4);
  return recorder;
}

function summarize(recorder: MetricsRecorder, range: { from?: Date | null; to?: Date | null }) {
  return summarizePoolMetrics({
    recorder,
    pool: "llm",
    poolId: 7,
    now: NOW,
    retentionDays: 7,
    ...range,
  });
}

describe("summarizePoolMetrics range", () => {
  it("defaults to the whole retention window ending now, unclamped", () => {
    const summary = summarize(recorderWithHistory(), {});
    expect(summary.pool_id).toBe(7);
    expect(summary.requests).toBe(2 + 3 + 4);
    expect(summary.range).toEqual({
      from: iso(minuteStart(NOW - 7 * DAY)),
      to: iso(NOW),
      retention_days: 7,
      clamped: false,
    });
  });

  it("treats explicit nulls as absent", () => {
    const summary = summarize(recorderWithHistory(), { from: null, to: null });
    expect(summary.requests).toBe(9);
    expect(summary.range.clamped).toBe(false);
  });

  it("clamps a from before retention to the retention start", () => {
    const summary = summarize(recorderWithHistory(), { from: new Date(NOW - 30 * DAY) });
    expect(summary.requests).toBe(9);
    expect(summary.range).toMatchObject({
      from: iso(minuteStart(NOW - 7 * DAY)),
      to: iso(NOW),
      clamped: true,
    });
  });

  it("cuts a to later than now down to now", () => {
    const summary = summarize(recorderWithHistory(), {
      from: new Date(NOW - 2 * MINUTE),
      to: new Date(NOW + DAY),
    });
    expect(summary.requests).toBe(3 + 4);
    expect(summary.range).toMatchObject({
      from: iso(minuteStart(NOW - 2 * MINUTE)),
      to: iso(NOW),
      clamped: true,
    });
  });

  it("does not flag a range that lies inside retention", () => {
    const summary = summarize(recorderWithHistory(), {
      from: new Date(NOW - 2 * DAY),
      to: new Date(NOW - 2 * MINUTE),
    });
    expect(summary.requests).toBe(2);
    expect(summary.range).toMatchObject({
      from: iso(minuteStart(NOW - 2 * DAY)),
      to: iso(minuteStart(NOW - 2 * MINUTE) + MINUTE),
      clamped: false,
    });
  });

  it("counts partial minutes whole at both ends", () => {
    // from 10 s before the one-minute-ago events' minute ends; to 1 ms into now's minute
    const minuteAgoStart = Math.floor((NOW - MINUTE) / MINUTE) * MINUTE;
    const summary = summarize(recorderWithHistory(), {
      from: new Date(minuteAgoStart + MINUTE - 10_000),
      to: new Date(minuteAgoStart + MINUTE + 1),
    });
    expect(summary.requests).toBe(3 + 4);
    // The range answered is the one counted: whole minutes, never past now.
    expect(summary.range).toMatchObject({ from: iso(minuteAgoStart), to: iso(NOW) });
  });

  it("answers the whole minutes it counted, so events before a mid-minute from show in range", () => {
    const recorder = new MetricsRecorder();
    const minute = minuteStart(NOW - 10 * MINUTE);
    recorder.forPool("llm").request(minute + 21_000);
    const summary = summarize(recorder, {
      from: new Date(minute + 24_000),
      to: new Date(minute + 26_000),
    });
    expect(summary.requests).toBe(1);
    expect(summary.range).toMatchObject({
      from: iso(minute),
      to: iso(minute + MINUTE),
      clamped: false,
    });
    const counted = [summary.range.from, summary.range.to].map((at) => Date.parse(at as string));
    expect(minute + 21_000).toBeGreaterThanOrEqual(counted[0]!);
    expect(minute + 21_000).toBeLessThan(counted[1]!);
  });

  it("counts the bucket in progress when now sits exactly on a minute boundary", () => {
    const recorder = new MetricsRecorder();
    const alignedNow = 1_700_000_040_000;
    recorder.forPool("llm").request(alignedNow);
    const summary = summarizePoolMetrics({
      recorder,
      pool: "llm",
      poolId: 1,
      now: alignedNow,
      retentionDays: 1,
    });
    expect(summary.requests).toBe(1);
  });

  it("collapses a window wholly in the future to an empty range at now", () => {
    const summary = summarize(recorderWithHistory(), { from: new Date(NOW + MINUTE) });
    expect(summary.requests).toBe(0);
    expect(summary.range).toMatchObject({ from: iso(NOW), to: iso(NOW), clamped: true });
  });

  it("collapses a window wholly before retention to an empty range at its start", () => {
    const summary = summarize(recorderWithHistory(), {
      from: new Date(NOW - 9 * DAY),
      to: new Date(NOW - 8 * DAY),
    });
    expect(summary.requests).toBe(0);
    expect(summary.range).toMatchObject({
      from: iso(NOW - 7 * DAY),
      to: iso(NOW - 7 * DAY),
      clamped: true,
    });
  });

  it("throws InvalidArgumentError when from is later than to", () => {
    expect(() =>
      summarize(recorderWithHistory(), { from: new Date(NOW - MINUTE), to: new Date(NOW - DAY) }),
    ).toThrow(InvalidArgumentError);
  });

  it("throws InvalidArgumentError for an invalid date or retention", () => {
    const recorder = recorderWithHistory();
    expect(() => summarize(recorder, { from: new Date(Number.NaN) })).toThrow(InvalidArgumentError);
    expect(() =>
      summarizePoolMetrics({ recorder, pool: "llm", poolId: 7, now: NOW, retentionDays: 0 }),
    ).toThrow(InvalidArgumentError);
  });
});

describe("summarizePoolMetrics counts and rates", () => {
  it("reports zeros, not NaN, for a pool with no requests", () => {
    const summary = summarizePoolMetrics({
      recorder: new MetricsRecorder(),
      pool: "idle",
      poolId: 3,
      now: NOW,
      retentionDays: 30,
    });
    expect(summary).toMatchObject({
      pool_id: 3,
      requests: 0,
      admitted: 0,
      admit_rate: 0,
      queued_count: 0,
      queued_pct: 0,
    });
  });

  it("computes admit_rate and queued_pct rounded to 4 decimals", () => {
    const recorder = new MetricsRecorder();
    const meter = recorder.forPool("llm");
    for (let index = 0; index < 3; index++) meter.request(NOW - 1_000);
    meter.admitted(NOW - 1_000, 0);
    meter.admitted(NOW - 1_000, 40);
    meter.queued(NOW - 1_000);
    meter.rejected(NOW - 1_000);
    const summary = summarizePoolMetrics({
      recorder,
      pool: "llm",
      poolId: 7,
      now: NOW,
      retentionDays: 1,
    });
    expect(summary).toMatchObject({
      requests: 3,
      admitted: 2,
      admit_rate: 0.6667,
      queued_count: 1,
      queued_pct: 33.3333,
    });
  });
});
