/**
 * One Sluice process of the Redis Cluster load test (`redis-cluster.test.ts`): a governor on
 * the cluster (the `redis+cluster://` URL form), the test's pools, and `callers` loops that
 * each call a random pool's origin through `governor.run` until `stop` arrives on stdin.
 * Prints one JSON line of counts when done.
 *
 * argv: url prefix plan-json callers [failure-policy]
 */
import { createRedisGovernor, type FailurePolicy } from "../../adapters/redis/index.js";

interface Plan {
  /** Pool name → origin URL. */
  origins: Record<string, string>;
  limit: number;
  budget: { id: string; pools: string[]; limit: number };
  termMs: number;
}

const [url, prefix, planJson, callersText, policy = "closed"] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  FailurePolicy?,
];
const plan = JSON.parse(planJson) as Plan;
const governor = await createRedisGovernor({ url, prefix, failurePolicy: policy });
await governor.defineBudget(plan.budget.id, { originMaxConcurrent: plan.budget.limit });
for (const pool of Object.keys(plan.origins)) {
  await governor.definePool(pool, {
    maxConcurrent: plan.limit,
    queue: { size: 1_000, timeoutMs: 5_000 },
    termMs: plan.termMs,
    renewIntervalMs: plan.termMs / 4,
    adaptive: false,
    budget: plan.budget.pools.includes(pool) ? { id: plan.budget.id, reservedConcurrent: 0 } : null,
  });
}

const counts = { served: 0, refused: 0, failed: 0 } as Record<string, number>;
let running = true;
process.stdin.on("data", (data) => {
  if (String(data).includes("stop")) running = false;
});

async function caller(): Promise<void> {
  const pools = Object.keys(plan.origins);
  while (running) {
    const pool = pools[Math.floor(Math.random() * pools.length)]!;
    try {
      await governor.run(pool, () => fetch(plan.origins[pool]!).then((answer) => answer.text()), {
        waitMs: 2_000,
      });
      counts.served!++;
    } catch (error) {
      const code = (error as { code?: string }).code ?? "other";
      counts[code] = (counts[code] ?? 0) + 1;
      counts[`${code}@${pool}`] = (counts[`${code}@${pool}`] ?? 0) + 1;
      // Redis unreachable (a shard failing over): try again shortly, as a client would.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

process.stdout.write("ready\n");
await Promise.all(Array.from({ length: Number(callersText) }, () => caller()));
await governor.close();
process.stdout.write(`${JSON.stringify(counts)}\n`);
process.exit(0);
