import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisSlotStore, deleteKeysUnder, RedisKeys } from "../../adapters/redis/index.js";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer } from "../../adapters/server/create-server.js";
import { tempDir } from "../cli/cli-process.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import {
  BUDGET,
  expectWithinLimits,
  LIMIT,
  LONE_POOLS,
  poolKey,
  served,
  startLoad,
  TERM_MS,
} from "./cluster-load.js";
import {
  requireClusterBinaries,
  startTestCluster,
  type TestCluster,
} from "./redis-cluster-harness.js";
import { uniquePrefix } from "./redis-harness.js";

const available = requireClusterBinaries("the Redis Cluster tests");

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
      // The failed shard's pools are served again by the promoted replica, which has their
      // state (the harness waits for the replicas' first sync). Replication is asynchronous: a
      // release the replica never got holds its slot until its lease ends, one term at most.
      const deadline = Date.now() + TERM_MS + 5_000;
      const servedAgain = () =>
        served(load.lone, onVictim).every((count, i) => count > servedAtFailover[i]!);
      while (!servedAgain() && Date.now() < deadline) await sleep(100);
      counts = await load.stop();

      expectWithinLimits(load);
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
