import type { AdaptationResult } from "./adaptation.js";
import { formatPercent, formatTable } from "./report.js";
import { oracleSemaphore } from "./sim/oracle.js";
import { sluiceLearning } from "./sim/strategies.js";

/** Issue 20's target for a kind of scenario, and whether Sluice's result meets it. */
export function judge(
  sluice: AdaptationResult,
  oracle: AdaptationResult,
): { target: string; measured: string; met: boolean } {
  const share = throttledShare(sluice);
  const ofOracle = oracle.ok === 0 ? 0 : sluice.ok / oracle.ok;
  switch (sluice.scenario.kind) {
    case "steady":
      return {
        target: "429 share ≤ 1%, goodput ≥ 97% of oracle",
        measured: `${formatPercent(share)} 429s, ${formatPercent(ofOracle)} of oracle`,
        met: share <= 0.01 && ofOracle >= 0.97,
      };
    case "drop":
      return {
        target: "under the new limit ≤ 2 s after the first 429",
        measured: formatSeconds(sluice.adaptMs),
        met: sluice.adaptMs !== null && sluice.adaptMs <= 2_000,
      };
    case "rise":
      return {
        target: "≥ 90% of the new optimum ≤ 60 s after the rise",
        measured: formatSeconds(sluice.adaptMs),
        met: sluice.adaptMs !== null && sluice.adaptMs <= 60_000,
      };
    case "quota":
      return {
        target: "no 429 after the first window",
        measured: `${sluice.throttled} 429s after it`,
        met: sluice.throttled === 0,
      };
  }
}

function throttledShare(result: AdaptationResult): number {
  const answers = result.ok + result.throttled;
  return answers === 0 ? 0 : result.throttled / answers;
}

function formatSeconds(ms: number | null): string {
  return ms === null ? "never" : `${(ms / 1000).toFixed(2)} s`;
}

/**
 * Issue 20's table: per scenario, Sluice's goodput as a share of the oracle's, its 429 share
 * after the warm-up, its adaptation time, and the target with a verdict.
 *
 * @example
 * ```ts
 * console.log(formatAdaptation(results));
 * ```
 */
export function formatAdaptation(results: readonly AdaptationResult[]): string {
  const rows: string[][] = [];
  for (const sluice of results.filter((result) => result.strategy === sluiceLearning.name)) {
    const oracle = results.find(
      (result) => result.scenario === sluice.scenario && result.strategy === oracleSemaphore.name,
    );
    if (oracle === undefined) continue;
    const verdict = judge(sluice, oracle);
    rows.push([
      sluice.scenario.name,
      formatPercent(oracle.ok === 0 ? 0 : sluice.ok / oracle.ok),
      formatPercent(throttledShare(sluice)),
      String(sluice.throttled),
      String(sluice.warmupThrottled),
      sluice.scenario.kind === "drop" || sluice.scenario.kind === "rise"
        ? formatSeconds(sluice.adaptMs)
        : "",
      String(sluice.finalLimit ?? ""),
      verdict.target,
      verdict.measured,
      verdict.met ? "met" : "NOT MET",
    ]);
  }
  return formatTable(
    [
      "scenario",
      "of oracle",
      "429 share",
      "429s",
      "warm-up 429s",
      "adapt",
      "limit",
      "target",
      "measured",
      "",
    ],
    rows,
    ["left", "right", "right", "right", "right", "right", "right", "left", "left", "left"],
  );
}
