import { describe, expect, it } from "vitest";
import { formatSummary, main } from "../../examples/governed-fetch.js";

describe("examples/governed-fetch", () => {
  it("never lets the upstream see more than maxConcurrent, finishes every call and learns a lower limit", async () => {
    // 50 callers against 8 slots and an upstream that serves 2: without the governor the
    // upstream would see up to 50 at once.
    const summary = await main({ calls: 50, upstreamConcurrency: 2, maxConcurrent: 8 });

    expect(summary.peakInFlight).toBeGreaterThan(0);
    expect(summary.peakInFlight).toBeLessThanOrEqual(summary.maxConcurrent);
    expect(summary.ok).toBe(summary.calls);
    expect(summary.failed).toBe(0);
    // The first burst overshoots the upstream; its 429s teach the pool a lower limit.
    expect(summary.throttled).toBeGreaterThan(0);
    expect(summary.learnedConcurrency).not.toBeNull();
    expect(summary.learnedConcurrency!).toBeLessThan(summary.maxConcurrent);
    expect(summary.effectiveLimit).toBe(summary.learnedConcurrency);
  });

  it("runs with its defaults and prints a readable summary", async () => {
    const summary = await main();
    expect(summary.calls).toBe(50);
    expect(summary.ok + summary.failed).toBe(50);
    expect(summary.peakInFlight).toBeLessThanOrEqual(10);
    const text = formatSummary(summary);
    expect(text).toContain("ok:");
    expect(text).toContain(`peak in flight at upstream: ${summary.peakInFlight}`);
    expect(text).toContain("learned concurrency limit:");
  });
});
