import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  createRedisSlotStore,
  RedisKeys,
  type RedisSlotStore,
} from "../../adapters/redis/index.js";
import { keySlot } from "../../adapters/redis/key-slot.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { StoreUnavailableError } from "../../src/errors.js";
import type { StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import {
  BUDGET,
  expectWithinLimits,
  LIMIT,
  LONE_POOLS,
  type Load,
  poolKey,
  served,
  startLoad,
} from "./cluster-load.js";
import type { ConcurrencyChecker } from "./e2e-upstream.js";
import {
  requireClusterBinaries,
  startTestCluster,
  type TestCluster,
} from "./redis-cluster-harness.js";
import { uniquePrefix } from "./redis-harness.js";

// A Redis Cluster without replicas: a master that goes takes its shard with it. Only the
// groups on that shard follow the failure policy; the others keep their exact shared limits,
// and the shard's groups come back at their limit once the master does. A master that loses
// its data while connected (FLUSHALL) is found out shard by shard.

const available = requireClusterBinaries("the Redis Cluster shard tests");

/** Waits (polling what the test can see) far longer than a loaded machine needs. */
const LONG = { timeout: 30_000, interval: 50 };

/** A master's node, asked directly (no redirection). */
function nodeAt(address: string): Redis {
  const [host, port] = address.split(":");
  const node = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 0 });
  node.on("error", () => {});
  return node;
}

describe.skipIf(!available)("Redis Cluster without replicas: health per shard", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ masters: 3, replicas: 0 });
  }, 60_000);
  // The cluster goes with its keys.
  afterAll(() => cluster?.stop());

  /** Every pool of the load by the master that holds it now. */
  async function poolsByMaster(keys: RedisKeys): Promise<Map<string, string[]>> {
    const byMaster = new Map<string, string[]>();
    const pools = [
      ...LONE_POOLS.map((pool) => [pool, null] as const),
      ...BUDGET.pools.map((pool) => [pool, BUDGET.id] as const),
    ];
    for (const [pool, budget] of pools) {
      const master = await cluster.masterOf(poolKey(keys, pool, budget));
      byMaster.set(master, [...(byMaster.get(master) ?? []), pool]);
    }
    return byMaster;
  }

  /** Starts again a master a failed test left dead, so the next test has three. */
  async function revive(): Promise<void> {
    for (const server of cluster.servers) {
      if (server.process === null) await cluster.restart(server.address);
    }
    await cluster.settled();
  }

  function checkerOf(load: Load, pool: string): ConcurrencyChecker {
    return BUDGET.pools.includes(pool) ? load.team : load.lone;
  }

  /** Resolves once each pool's origin answered `more` calls after `before`. */
  async function servedMore(load: Load, pools: string[], before: number[], more: number) {
    await vi.waitFor(() => {
      for (const [i, pool] of pools.entries()) {
        expect(served(checkerOf(load, pool), [pool])[0], pool).toBeGreaterThanOrEqual(
          before[i]! + more,
        );
      }
    }, LONG);
  }

  function servedNow(load: Load, pools: string[]): number[] {
    return pools.map((pool) => served(checkerOf(load, pool), [pool])[0]!);
  }

  it("finds each group's hash slot as the cluster does, so a shard's groups are known", async () => {
    const keys = new RedisKeys(uniquePrefix("slots"));
    const names = ["llm", "a{b}:c", "émbed", "", "x".repeat(300)];
    const node = nodeAt((await cluster.masters())[0]!);
    try {
      for (const name of names) {
        for (const tag of [keys.groupTag(name, null), keys.budgetTag(name)]) {
          const key = `${keys.groupBase(tag)}:pool:x`;
          expect(keySlot(tag), key).toBe(Number(await node.cluster("KEYSLOT", key)));
        }
      }
      expect(Number(await node.cluster("KEYSLOT", "no-tag{}"))).toBe(keySlot("no-tag{}"));
    } finally {
      node.disconnect();
    }
  });

  it("a master killed mid-run: its pools fail closed, the others keep their exact limit, then it comes back", async () => {
    const prefix = uniquePrefix("shards");
    const keys = new RedisKeys(prefix);
    const load = await startLoad(cluster, prefix, "closed");
    let counts: Record<string, number>[] | null = null;
    try {
      const byMaster = await poolsByMaster(keys);
      // Every shard holds pools of the load.
      expect(byMaster.size).toBe(3);
      const all = [...LONE_POOLS, ...BUDGET.pools];
      await servedMore(
        load,
        all,
        all.map(() => 0),
        5,
      );

      const victim = poolKey(keys, LONE_POOLS[0]!, null);
      const dead = await cluster.masterOf(victim);
      const onDead = byMaster.get(dead)!;
      const alive = all.filter((pool) => !onDead.includes(pool));
      cluster.kill(dead);
      expectWithinLimits(load);
      load.lone.restartPeaks();
      load.team.restartPeaks();

      // The pools on the other shards keep serving while the master is gone, at their limit.
      await servedMore(load, alive, servedNow(load, alive), 30);
      const deadServed = servedNow(load, onDead);
      await servedMore(load, alive, servedNow(load, alive), 30);
      expectWithinLimits(load);
      const peaks = alive.map((pool) => checkerOf(load, pool).tally(pool).maxInFlight);
      expect(Math.max(...peaks)).toBe(LIMIT);
      // The dead shard's pools served nobody meanwhile (the calls that held a slot as it went
      // finished long before: every live pool served 30 calls of 30 ms since).
      const deadAfter = servedNow(load, onDead);
      for (const [i, pool] of onDead.entries()) {
        expect(deadAfter[i]! - deadServed[i]!, pool).toBe(0);
      }

      await cluster.restart(dead);
      await cluster.settled(victim);
      expectWithinLimits(load);
      load.lone.restartPeaks();
      load.team.restartPeaks();
      // Restarted empty: its pools come back (after the restore grace) at their exact limit.
      await servedMore(load, onDead, servedNow(load, onDead), 20);
      counts = await load.stop();

      expectWithinLimits(load);
      const peaksBack = onDead.map((pool) => checkerOf(load, pool).tally(pool).maxInFlight);
      expect(Math.max(...peaksBack)).toBe(LIMIT);
      const failed = (pool: string) =>
        counts!.reduce((sum, count) => sum + (count[`store_unavailable@${pool}`] ?? 0), 0);
      // Failure policy "closed" on the dead shard only: no call on a live shard failed.
      for (const pool of onDead) expect(failed(pool), pool).toBeGreaterThan(0);
      for (const pool of alive) expect(failed(pool), pool).toBe(0);
    } finally {
      if (counts === null) await load.stop().catch(() => {});
      await revive();
    }
  }, 120_000);

  const POOL: StorePoolConfig = { ...BASE_POOL, maxConcurrent: 2, queueSize: 10 };
  const GRACE_MS = 500;

  /** Stores on the shared clock, closed when the test ends. */
  const opened: RedisSlotStore[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  function openStore(prefix: string, clock: ManualClock, failurePolicy: "open" | "closed") {
    const store = createRedisSlotStore({
      url: cluster.url,
      prefix,
      clock,
      failurePolicy,
      restoreGraceMs: GRACE_MS,
      recoveryProbeMs: { min: 50, max: 200 },
    });
    opened.push(store);
    return store;
  }

  /** Pool names whose groups live on the given masters, one each. */
  async function poolsOn(keys: RedisKeys, masters: string[]): Promise<string[]> {
    const found = new Map<string, string>();
    for (let i = 0; found.size < masters.length; i++) {
      const pool = `s${i}`;
      const master = await cluster.masterOf(poolKey(keys, pool, null));
      if (masters.includes(master) && !found.has(master)) found.set(master, pool);
    }
    return masters.map((master) => found.get(master)!);
  }

  it("FLUSHALL on one master: its groups are found lost and recovered, the others untouched", async () => {
    const prefix = uniquePrefix("shards-flush");
    const keys = new RedisKeys(prefix);
    // The master a single epoch key would live on is not the one flushed: the loss must be
    // found on the flushed shard itself.
    const epochMaster = await cluster.masterOf(keys.epoch());
    const others = (await cluster.masters()).filter((master) => master !== epochMaster);
    const [flushed, kept] = await poolsOn(keys, others);
    const clock = new ManualClock();
    const a = openStore(prefix, clock, "closed");
    const b = openStore(prefix, clock, "closed");
    try {
      // Room for one more than a holds: b's first refusal can only be the restore grace
      // (with a full pool it would be "concurrency" once a has adopted its slots first).
      const roomy = { ...POOL, maxConcurrent: 3 };
      for (const store of [a, b]) {
        await store.upsertPool(flushed!, roomy);
        await store.upsertPool(kept!, POOL);
      }
      for (const [pool, slotId] of [
        [flushed!, "a1"],
        [flushed!, "a2"],
        [kept!, "k1"],
      ] as const) {
        expect(await a.acquire(pool, { slotId, waitMs: 0 })).toMatchObject({ type: "granted" });
      }

      const node = nodeAt(others[0]!);
      try {
        await node.flushall();
      } finally {
        node.disconnect();
      }

      // b finds the pool gone: it comes back paused, and a hears of the loss and adopts.
      expect(await b.acquire(flushed!, { slotId: "b1", waitMs: 0 })).toMatchObject({
        type: "rejected",
        reason: "paused",
      });
      await vi.waitFor(
        async () => expect((await b.snapshot(flushed!))?.slotIds.sort()).toEqual(["a1", "a2"]),
        LONG,
      );
      await clock.advance(GRACE_MS);
      expect(await b.acquire(flushed!, { slotId: "b2", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
      // a's adopted slots count: the pool is full at three, not at one.
      expect(await b.acquire(flushed!, { slotId: "b3", waitMs: 0 })).toMatchObject({
        type: "rejected",
        reason: "concurrency",
      });
      expect(await a.renew(flushed!, "a1")).toMatchObject({ type: "renewed" });
      expect(await a.release(flushed!, "a1")).toMatchObject({ released: true });
      expect(await b.acquire(flushed!, { slotId: "b4", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
      // The other shard kept everything, and was never paused.
      expect((await b.snapshot(kept!))?.slotIds).toEqual(["k1"]);
      expect(await b.acquire(kept!, { slotId: "k2", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
      expect(await b.acquire(kept!, { slotId: "k3", waitMs: 0 })).toMatchObject({
        type: "rejected",
        reason: "concurrency",
      });
    } finally {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    }
  }, 60_000);

  it('failure policy "open": only the dead shard\'s pools go local, and Redis takes their slots over when it is back', async () => {
    const prefix = uniquePrefix("shards-open");
    const keys = new RedisKeys(prefix);
    const masters = await cluster.masters();
    const [down, up] = await poolsOn(keys, masters.slice(0, 2));
    const clock = new ManualClock();
    const open = openStore(prefix, clock, "open");
    const closed = openStore(prefix, clock, "closed");
    try {
      for (const store of [open, closed]) {
        await store.upsertPool(down!, POOL);
        await store.upsertPool(up!, POOL);
      }
      expect(await open.acquire(down!, { slotId: "d1", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
      cluster.kill(masters[0]!);
      await vi.waitFor(() => {
        expect(open.health()).toMatchObject({ state: "degraded" });
        expect(closed.health()).toMatchObject({ state: "unavailable" });
      }, LONG);
      expect(open.health().reason).toContain(masters[0]);
      // Only one master of three: the store is partly down, which /readyz still counts as ready.
      expect(open.health().partial).toBe(true);

      // The live shard keeps one shared limit: both processes' slots count together.
      expect(await open.acquire(up!, { slotId: "u1", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
      expect(await closed.acquire(up!, { slotId: "u2", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
      expect(await open.acquire(up!, { slotId: "u3", waitMs: 0 })).toMatchObject({
        type: "rejected",
        reason: "concurrency",
      });
      expect((await closed.snapshot(up!))?.slotIds.sort()).toEqual(["u1", "u2"]);

      // The dead shard: "closed" refuses, "open" admits locally, counting the slot it held.
      await expect(closed.acquire(down!, { slotId: "c1", waitMs: 0 })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      const localBefore = open.stats().localOperations;
      expect(await open.acquire(down!, { slotId: "d2", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
      expect(await open.acquire(down!, { slotId: "d3", waitMs: 0 })).toMatchObject({
        type: "rejected",
        reason: "concurrency",
      });
      expect(open.stats().localOperations).toBe(localBefore + 2);

      // Back without its data: the local slot and the one held before are adopted.
      await cluster.restart(masters[0]!);
      await cluster.settled(poolKey(keys, down!, null));
      await vi.waitFor(() => {
        expect(open.health()).toEqual({ state: "ok", since: expect.any(Number), reason: null });
        expect(closed.health()).toMatchObject({ state: "ok" });
      }, LONG);
      await vi.waitFor(
        async () => expect((await closed.snapshot(down!))?.slotIds.sort()).toEqual(["d1", "d2"]),
        LONG,
      );
      await clock.advance(GRACE_MS);
      expect(await closed.acquire(down!, { slotId: "c2", waitMs: 0 })).toMatchObject({
        type: "rejected",
        reason: "concurrency",
      });
      expect(await open.release(down!, "d2")).toMatchObject({ released: true });
      expect(await closed.acquire(down!, { slotId: "c3", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
    } finally {
      await revive();
    }
  }, 90_000);
});
