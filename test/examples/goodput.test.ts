import { describe, expect, it } from "vitest";
import { ADAPTATION_SCENARIOS, runAdaptation, simulatedHarness } from "../../bench/adaptation.js";
import { judge } from "../../bench/adaptation-report.js";
import type { GoodputResult, GoodputScenario } from "../../bench/goodput.js";
import { COARSE_HINTS, RPM_BOUND, runGoodput } from "../../bench/goodput.js";

/** Two simulated minutes after a 30 s warm-up: about a second of real time per scenario. */
function small(scenario: GoodputScenario): GoodputScenario {
  return { ...scenario, warmupMs: 30_000, durationMs: 120_000 };
}

function byStrategy(results: GoodputResult[], name: string): GoodputResult {
  const result = results.find((candidate) => candidate.strategy === name);
  if (!result) throw new Error(`no result for ${name}`);
  return result;
}

describe("bench/goodput (small size)", () => {
  it("Sluice learns an RPM-bound upstream: near-optimal goodput with a sliver of the 429s", async () => {
    const results = await runGoodput(small(RPM_BOUND));
    const none = byStrategy(results, "no governor");
    const sluice = byStrategy(results, "sluice learning");

    expect(none.throttledShare).toBeGreaterThan(0.5);
    expect(sluice.throttledShare).toBeLessThan(none.throttledShare / 10);
    expect(sluice.throttledShare).toBeLessThanOrEqual(0.03);
    expect(sluice.shareOfOptimum).toBeGreaterThanOrEqual(0.9);
    expect(sluice.shareOfOptimum).toBeLessThanOrEqual(1.05);
    expect(sluice.notes.learnedRpm).toBe(RPM_BOUND.limits.rpm);
    for (const result of results) {
      expect(result.peakConcurrency).toBeLessThanOrEqual(RPM_BOUND.limits.concurrency);
    }
  });

  it("whole-second Retry-After on concurrency 429s does not stall Sluice's pool", async () => {
    const results = await runGoodput(small(COARSE_HINTS));
    const none = byStrategy(results, "no governor");
    const sluice = byStrategy(results, "sluice learning");

    expect(sluice.throttledShare).toBeLessThan(none.throttledShare);
    expect(sluice.throttledShare).toBeLessThanOrEqual(0.03);
    // Pausing the whole pool for each probe's Retry-After cost ~30% here.
    expect(sluice.shareOfOptimum).toBeGreaterThanOrEqual(0.9);
    expect(sluice.notes.learnedConcurrency ?? COARSE_HINTS.maxConcurrent).toBeLessThanOrEqual(
      COARSE_HINTS.limits.concurrency + 1,
    );
  });
});

describe("bench/goodput: issue 20's adaptation table (simulated clock)", () => {
  it("meets every target: few 429s at a steady limit, fast down, up within a minute, quota windows kept", async () => {
    const verdicts: Record<string, ReturnType<typeof judge>> = {};
    for (const scenario of ADAPTATION_SCENARIOS) {
      const short = scenario.kind === "steady" ? { ...scenario, durationMs: 180_000 } : scenario;
      const [oracle, sluice] = await runAdaptation(short, simulatedHarness);
      verdicts[scenario.kind] = judge(sluice!, oracle!);
    }
    for (const [kind, verdict] of Object.entries(verdicts)) {
      expect({ kind, ...verdict }).toMatchObject({ kind, met: true });
    }
  });
});
