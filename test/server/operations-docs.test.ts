import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { AuthRefusalReason } from "../../adapters/server/prometheus-metrics.js";
import { ACCESS_OUTCOMES } from "../../src/access-log/types.js";
import type { RejectionReason } from "../../src/errors.js";
import { CALLER_POLICY_NAMES, type CallerPolicyName } from "../../src/policies/policy-refusal.js";

const OPERATIONS_DOC = readFileSync(
  fileURLToPath(new URL("../../docs/operations.md", import.meta.url)),
  "utf8",
);

/** Every `reason` label value; a new reason fails typechecking here until it is listed. */
const REFUSAL_REASONS = {
  concurrency: true,
  queue_full: true,
  rpm: true,
  paused: true,
  budget: true,
  unauthorized: true,
  forbidden: true,
  ip_allowlist: true,
  hmac: true,
  jwt: true,
  access_proxy: true,
} satisfies Record<RejectionReason | AuthRefusalReason | CallerPolicyName, true>;

/** The metrics table row of one series. */
function rowOf(series: string): string {
  return OPERATIONS_DOC.split("\n").find((line) => line.startsWith(`| \`${series}\``)) ?? "";
}

// Dashboards and alerts are written from this table: every label value /metrics can show is in it.
describe("docs/operations.md's metrics table", () => {
  it("names every outcome of sluice_pool_requests_total", () => {
    const row = rowOf("sluice_pool_requests_total");
    expect(ACCESS_OUTCOMES.filter((outcome) => !row.includes(`\`${outcome}\``))).toEqual([]);
  });

  it("names every reason of sluice_pool_refusals_total", () => {
    const row = rowOf("sluice_pool_refusals_total");
    const reasons = [...new Set([...Object.keys(REFUSAL_REASONS), ...CALLER_POLICY_NAMES])];
    expect(reasons.filter((reason) => !row.includes(`\`${reason}\``))).toEqual([]);
  });
});
