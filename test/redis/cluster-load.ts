/**
 * A load on a test Redis Cluster from several processes (`cluster-load-worker.ts`), shared by
 * the cluster test files: lone pools spread over every shard and one budget's pools, each
 * pool's origin counting what it has in flight.
 */
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { FailurePolicy, RedisKeys } from "../../adapters/redis/index.js";
import { encodeName } from "../../adapters/redis/keys.js";
import { ConcurrencyChecker } from "./e2e-upstream.js";
import type { TestCluster } from "./redis-cluster-harness.js";

export const LONE_POOLS = ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"];
export const BUDGET = { id: "team", pools: ["t0", "t1"], limit: 4 };
export const LIMIT = 3;
/** The slot lease of the load's pools: a slot whose release was lost comes back after it. */
export const TERM_MS = 4_000;
const PROCESSES = 3;
const WORKER = fileURLToPath(new URL("./cluster-load-worker.ts", import.meta.url));

/** The key of a pool's hash: the master that holds it holds the whole group. */
export function poolKey(keys: RedisKeys, pool: string, budget: string | null): string {
  return `${keys.groupBase(keys.groupTag(pool, budget))}:pool:${encodeName(pool)}`;
}

/** A running load: one checker per kind of pool, and the worker processes calling them. */
export interface Load {
  lone: ConcurrencyChecker;
  team: ConcurrencyChecker;
  /**
   * Stops every worker; resolves with what each counted: `served`, failures by error code,
   * and by code and pool (`store_unavailable@p3`).
   */
  stop(): Promise<Record<string, number>[]>;
}

export async function startLoad(
  cluster: TestCluster,
  prefix: string,
  failurePolicy: FailurePolicy = "closed",
): Promise<Load> {
  // Held 30 ms: long enough for callers to pile up at the limit, short enough for many turns.
  const lone = new ConcurrencyChecker(30);
  const team = new ConcurrencyChecker(30);
  const origins: Record<string, string> = {};
  for (const pool of LONE_POOLS) origins[pool] = await lone.addOrigin(pool);
  for (const pool of BUDGET.pools) origins[pool] = await team.addOrigin(pool);
  const plan = JSON.stringify({ origins, limit: LIMIT, budget: BUDGET, termMs: TERM_MS });
  const args = [WORKER, cluster.url, prefix, plan, "12", failurePolicy];
  const workers = Array.from({ length: PROCESSES }, () =>
    spawn(process.execPath, ["--import", "tsx", ...args], { stdio: ["pipe", "pipe", "inherit"] }),
  );
  const outputs = workers.map((worker) => {
    let text = "";
    worker.stdout!.on("data", (data) => {
      text += String(data);
    });
    return () => text;
  });
  try {
    await Promise.all(
      outputs.map(async (output, i) => {
        const deadline = Date.now() + 30_000;
        while (!output().includes("ready")) {
          if (workers[i]!.exitCode !== null || Date.now() > deadline) {
            throw new Error(`worker ${i} did not start: ${output()}`);
          }
          await sleep(50);
        }
      }),
    );
  } catch (error) {
    for (const worker of workers) worker.kill("SIGKILL");
    throw error;
  }
  return {
    lone,
    team,
    async stop() {
      const exits = workers.map(
        (worker) => new Promise<void>((resolve) => worker.once("exit", () => resolve())),
      );
      for (const worker of workers) worker.stdin!.end("stop\n");
      await Promise.all(exits);
      await lone.stop();
      await team.stop();
      return outputs.map((output) => JSON.parse(output().trim().split("\n").at(-1)!));
    },
  };
}

/** How many calls each pool's origin answered so far. */
export function served(checker: ConcurrencyChecker, pools: readonly string[]): number[] {
  return pools.map((pool) => checker.tally(pool).served);
}

/** No pool ever had more than its limit in flight, nor the budget more than its ceiling. */
export function expectWithinLimits(load: Load): void {
  for (const pool of LONE_POOLS)
    expect(load.lone.tally(pool).maxInFlight).toBeLessThanOrEqual(LIMIT);
  for (const pool of BUDGET.pools) {
    expect(load.team.tally(pool).maxInFlight).toBeLessThanOrEqual(LIMIT);
  }
  expect(load.team.maxTotalInFlight).toBeLessThanOrEqual(BUDGET.limit);
}
