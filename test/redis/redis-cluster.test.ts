import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisSlotStore, deleteKeysUnder, RedisKeys } from "../../adapters/redis/index.js";
import { encodeName } from "../../adapters/redis/keys.js";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer } from "../../adapters/server/create-server.js";
import { tempDir } from "../cli/cli-process.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { ConcurrencyChecker } from "./e2e-upstream.js";
import {
  requireClusterBinaries,
  startTestCluster,
  type TestCluster,
} from "./redis-cluster-harness.js";
import { uniquePrefix } from "./redis-harness.js";

const available = requireClusterBinaries("the Redis Cluster tests");

const LONE_POOLS = ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"];
const BUDGET = { id: "team", pools: ["t0", "t1"], limit: 4 };
const LIMIT = 3;
const PROCESSES = 3;
const WORKER = fileURLToPath(new URL("./cluster-load-worker.ts", import.meta.url));

/** The key of a pool's hash: the master that holds it holds the whole group. */
function poolKey(keys: RedisKeys, pool: string, budget: string | null): string {
  return `${keys.groupBase(keys.groupTag(pool, budget))}:pool:${encodeName(pool)}`;
}

/** A running load: one checker per kind of pool, and the worker processes calling them. */
interface Load {
  lone: ConcurrencyChecker;
  team: ConcurrencyChecker;
  /** Stops every worker; resolves with what each counted. */
  stop(): Promise<Record<string, number>[]>;
}

async function startLoad(cluster: TestCluster, prefix: string): Promise<Load> {
  // Held 30 ms: long enough for callers to pile up at the limit, short enough for many turns.
  const lone = new ConcurrencyChecker(30);
  const team = new ConcurrencyChecker(30);
  const origins: Record<string, string> = {};
  for (const pool of LONE_POOLS) origins[pool] = await lone.addOrigin(pool);
  for (const pool of BUDGET.pools) origins[pool] = await team.addOrigin(pool);
  const plan = JSON.stringify({ origins, limit: LIMIT, budget: BUDGET, termMs: 4_000 });
  const workers = Array.from({ length: PROCESSES }, () =>
    spawn(process.execPath, ["--import", "tsx", WORKER, cluster.url, prefix, plan, "12"], {
      stdio: ["pipe", "pipe", "inherit"],
    }),
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

function served(checker: ConcurrencyChecker, pools: readonly string[]): number[] {
  return pools.map((pool) => checker.tally(pool).served);
}

/** No pool ever had more than its limit in flight, nor the budget more than its ceiling. */
function expectWithinLimits(load: Load): void {
  for (const pool of LONE_POOLS)
    expect(load.lone.tally(pool).maxInFlight).toBeLessThanOrEqual(LIMIT);
  for (const pool of BUDGET.pools) {
    expect(load.team.tally(pool).maxInFlight).toBeLessThanOrEqual(LIMIT);
  }
  expect(load.team.maxTotalInFlight).toBeLessThanOrEqual(BUDGET.limit);
}

describe.skipIf(!available)("Redis Cluster (3 masters, 3 replicas)", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ masters: 3, replicas: 1 });
  }, 60_000);
  // The cluster goes with its keys.
  afterAll(() => cluster?.stop());

  function freshPrefix(): { prefix: string; keys: RedisKeys } {
    const prefix = uniquePrefix("cluster");
    return { prefix, keys: new RedisKeys(prefix) };
  }

  it("spreads lone pools over every master, keeps a budget's pools on one, one round trip per acquire", async () => {
    const { prefix, keys } = freshPrefix();
    const store = createRedisSlotStore({ url: cluster.url, prefix });
    try {
      await store.ready();
      await store.upsertBudget(BUDGET.id, BUDGET.limit);
      for (const pool of LONE_POOLS) await store.upsertPool(pool, BASE_POOL);
      const inBudget = { ...BASE_POOL, budget: { id: BUDGET.id, reservedConcurrent: 0 } };
      for (const pool of BUDGET.pools) await store.upsertPool(pool, inBudget);

      const owners = async (pools: string[], budget: string | null) =>
        Promise.all(
          pools.map(async (pool) => {
            const key = poolKey(keys, pool, budget);
            const owner = await cluster.masterOf(key);
            // The key is really there, on that master (asked directly, no redirection).
            const [host, port] = owner.split(":");
            const node = new Redis({ host, port: Number(port), lazyConnect: true });
            try {
              expect(await node.exists(key)).toBe(1);
            } finally {
              node.disconnect();
            }
            return owner;
          }),
        );
      // A lone acquire on any shard is one round trip, as on one Redis.
      for (const pool of LONE_POOLS) {
        const before = store.stats().roundTrips;
        expect(await store.acquire(pool, { slotId: `${pool}-1`, waitMs: 0 })).toMatchObject({
          type: "granted",
        });
        expect(store.stats().roundTrips - before, pool).toBe(1);
      }
      const masters = await cluster.masters();
      expect(masters).toHaveLength(3);
      expect(new Set(await owners(LONE_POOLS, null))).toEqual(new Set(masters));
      expect(new Set(await owners(BUDGET.pools, BUDGET.id)).size).toBe(1);
      // The deletion helper finds every key on every master.
      await store.close();
      expect(await deleteKeysUnder(prefix, { nodes: cluster.nodes })).toBeGreaterThan(0);
      expect(await deleteKeysUnder(prefix, cluster.url)).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("keeps one limit per pool and the budget's ceiling under load from several processes", async () => {
    const { prefix } = freshPrefix();
    const load = await startLoad(cluster, prefix);
    await sleep(4_000);
    const counts = await load.stop();

    expectWithinLimits(load);
    // Every pool was served (all three shards answered) and the limits were reached, so the
    // bound above was tested, not merely never approached.
    for (const count of served(load.lone, LONE_POOLS)) expect(count).toBeGreaterThan(0);
    for (const count of served(load.team, BUDGET.pools)) expect(count).toBeGreaterThan(0);
    expect(Math.max(...LONE_POOLS.map((pool) => load.lone.tally(pool).maxInFlight))).toBe(LIMIT);
    expect(load.team.maxTotalInFlight).toBe(BUDGET.limit);
    expect(counts.reduce((sum, count) => sum + (count.served ?? 0), 0)).toBeGreaterThan(100);
  }, 60_000);

  it("sluice serve takes --redis-cluster-nodes and checks every master at start", async () => {
    const { prefix } = freshPrefix();
    // One master (not the one the client happens to ask first) evicts keys.
    const masters = await cluster.masters();
    const evicting = masters.at(-1)!;
    const [host, port] = evicting.split(":");
    const node = new Redis({ host, port: Number(port) });
    await node.config("SET", "maxmemory-policy", "allkeys-lru");
    const { dir, cleanup } = tempDir("sluice-redis-cluster-serve-");
    const lines: string[] = [];
    try {
      const config = loadServerConfig({
        flags: { port: "0", dataDir: dir, redisPrefix: prefix },
        env: { SLUICE_REDIS_CLUSTER_NODES: cluster.nodes.join(",") },
      });
      const server = await createSluiceServer(config, { log: (line) => lines.push(line) });
      await server.close();
      expect(lines).toContainEqual(expect.stringContaining("Redis slot store at Redis Cluster"));
      expect(lines).toContainEqual(
        expect.stringMatching(/^Warning: Redis evicts keys .*maxmemory-policy allkeys-lru/),
      );
    } finally {
      await node.config("SET", "maxmemory-policy", "noeviction");
      node.disconnect();
      cleanup();
    }
  });

  it("follows a failover when a master is killed mid-run, never over the limit", async () => {
    const { prefix, keys } = freshPrefix();
    const load = await startLoad(cluster, prefix);
    let counts: Record<string, number>[] | null = null;
    try {
      await sleep(1_500);
      const victimKey = poolKey(keys, LONE_POOLS[0]!, null);
      const victim = await cluster.masterOf(victimKey);
      const onVictim: string[] = [];
      for (const pool of LONE_POOLS) {
        if ((await cluster.masterOf(poolKey(keys, pool, null))) === victim) onVictim.push(pool);
      }
      cluster.kill(victim);
      await cluster.settled(victimKey);
      expect(await cluster.masterOf(victimKey)).not.toBe(victim);
      const servedAtFailover = served(load.lone, onVictim);
      await sleep(3_000);
      counts = await load.stop();

      expectWithinLimits(load);
      // The failed shard's pools are served again by the promoted replica.
      const servedAfter = served(load.lone, onVictim);
      for (const [i, pool] of onVictim.entries()) {
        expect(servedAfter[i], pool).toBeGreaterThan(servedAtFailover[i]!);
      }
      // Calls that met the dead master failed (StoreUnavailableError), none hung.
      expect(counts.some((count) => (count.store_unavailable ?? 0) > 0)).toBe(true);
    } finally {
      if (counts === null) await load.stop().catch(() => {});
    }
  }, 90_000);
});
