import { describe, expect, it } from "vitest";
import { formatSharedLimit, main } from "../../examples/shared-limit-redis.js";
import { requireRedis } from "../redis/redis-harness.js";

const available = await requireRedis("the Redis example");

describe.skipIf(!available)("examples/shared-limit-redis", () => {
  it("three processes on one Redis never put more than the pool's limit on the upstream", async () => {
    const summary = await main({
      processes: 3,
      callsPerProcess: 15,
      maxConcurrent: 3,
      workerExecArgv: ["--import", import.meta.resolve("tsx")],
    });
    expect(summary.ok).toBe(45);
    // The upstream would take 100 at once: only the shared limit keeps it at 3.
    expect(summary.peakInFlight).toBeLessThanOrEqual(3);
    expect(summary.peakInFlight).toBeGreaterThan(1);
    expect(formatSharedLimit(summary)).toContain(
      `peak in flight at upstream: ${summary.peakInFlight}`,
    );
  }, 60_000);
});
