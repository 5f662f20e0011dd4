import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GrantLog, RPM_WINDOW_MS } from "../../src/store/grant-log.js";

/** The gate by definition: wait until fewer than `rpm` of `times` fall in `(t − 60 s, t]`. */
function modelWaitMs(times: number[], now: number, rpm: number): number {
  if (times.length < rpm) return 0;
  const leavesAt = times[times.length - rpm]! + RPM_WINDOW_MS;
  return leavesAt > now ? leavesAt - now : 0;
}

describe("GrantLog", () => {
  it("answers the time until the rpm-th most recent grant leaves the window", () => {
    const log = new GrantLog();
    log.ensureCapacity(3);
    for (const at of [0, 10, 20]) log.record(at);
    expect(log.waitMs(20, 4)).toBe(0);
    expect(log.waitMs(20, 3)).toBe(RPM_WINDOW_MS - 20);
    expect(log.waitMs(RPM_WINDOW_MS, 3)).toBe(0);
    expect(log.waitMs(RPM_WINDOW_MS, 2)).toBe(10);
  });

  it("grows only as grants arrive within one minute, up to the largest gate", () => {
    const log = new GrantLog();
    log.ensureCapacity(1_000_000);
    // One grant a second for ten minutes: never more than 60 in the window.
    for (let second = 0; second < 600; second++) log.record(second * 1000);
    expect(log.size).toBeLessThanOrEqual(64);
    expect(log.waitMs(599_000, 60)).toBe(1000);
    // 100 000 grants at one instant: all kept, the gate stays exact.
    for (let i = 0; i < 100_000; i++) log.record(700_000);
    expect(log.size).toBeGreaterThanOrEqual(100_000);
    expect(log.waitMs(700_000, 100_001)).toBe(0);
    expect(log.waitMs(700_000, 100_000)).toBe(RPM_WINDOW_MS);
  });

  it("keeps at most the largest gate's worth of grants", () => {
    const log = new GrantLog();
    for (let i = 0; i < 5_000; i++) log.record(1_000);
    expect(log.size).toBe(GrantLog.MIN_HISTORY);
    expect(log.waitMs(1_000, GrantLog.MIN_HISTORY)).toBe(RPM_WINDOW_MS);
  });

  it("matches the definition for any grant times and gate", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.array(
          fc.oneof(
            fc.constant(0),
            fc.integer({ min: 0, max: 500 }),
            fc.integer({ min: 0, max: 20_000 }),
          ),
          { maxLength: 1_500 },
        ),
        (rpm, gaps) => {
          const log = new GrantLog();
          log.ensureCapacity(rpm);
          const times: number[] = [];
          let now = 0;
          for (const gap of gaps) {
            now += gap;
            expect(log.waitMs(now, rpm)).toBe(modelWaitMs(times, now, rpm));
            log.record(now);
            times.push(now);
          }
          expect(log.size).toBeLessThanOrEqual(Math.max(GrantLog.MIN_HISTORY, rpm));
        },
      ),
      { seed: 0x5_1_1_c_e, numRuns: 200 },
    );
  });
});
