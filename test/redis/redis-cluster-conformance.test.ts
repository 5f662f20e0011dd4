import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRedisSlotStore, deleteKeysUnder, RedisKeys } from "../../adapters/redis/index.js";
import { StoreUnavailableError } from "../../src/errors.js";
import { describeGovernorProperties } from "../store-conformance/governor-properties.js";
import { describeGovernorRegressions } from "../store-conformance/governor-regressions.js";
import { describeStoreConformance } from "../store-conformance/store-conformance.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { redisStoreHarness } from "./conformance-harness.js";
import {
  requireClusterBinaries,
  startTestCluster,
  type TestCluster,
} from "./redis-cluster-harness.js";
import { uniquePrefix } from "./redis-harness.js";

const available = requireClusterBinaries("the Redis Cluster store conformance suite");

/**
 * The store conformance suite (the same one `redis-conformance.test.ts` runs on a single
 * Redis) on a real three-master cluster: every group's scripts on its own shard.
 */
describe.skipIf(!available)("RedisSlotStore on a Redis Cluster", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ masters: 3, replicas: 0 });
  }, 60_000);
  afterAll(() => cluster?.stop());

  // The cluster, keys and all, goes at the end: no last clean-up of prefixes.
  const clusterHarness = redisStoreHarness(
    () => ({ cluster: { nodes: cluster.nodes } }),
    (prefix) => deleteKeysUnder(prefix, { nodes: cluster.nodes }).then(() => {}),
  );

  describeStoreConformance("redis-cluster", clusterHarness);
  describeGovernorProperties("redis-cluster", clusterHarness);
  describeGovernorRegressions("redis-cluster", clusterHarness);

  // Last: it kills a master (no replica), then starts it again empty.
  it("a master lost without a replica: calls fail closed, then held slots come back on it", async () => {
    const prefix = uniquePrefix("cluster-lost-master");
    const keys = new RedisKeys(prefix);
    const open = () =>
      createRedisSlotStore({
        cluster: { nodes: cluster.nodes },
        prefix,
        recoveryProbeMs: { min: 50, max: 200 },
      });
    const [holder, other] = [open(), open()];
    try {
      await Promise.all([holder.ready(), other.ready()]);
      const pool = { ...BASE_POOL, maxConcurrent: 1 };
      for (const store of [holder, other]) await store.upsertPool("x", pool);
      expect(await holder.acquire("x", { slotId: "a1", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
      const victim = await cluster.masterOf(`${keys.groupBase(keys.groupTag("x", null))}:pool:x`);

      cluster.kill(victim);
      await vi.waitFor(() => expect(other.health().state).toBe("unavailable"), {
        timeout: 10_000,
      });
      await expect(other.acquire("x", { slotId: "b1", waitMs: 0 })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );

      // Back without its data: the holder puts its slot back, so the limit still holds.
      await cluster.restart(victim);
      await cluster.settled();
      for (const store of [holder, other]) {
        await vi.waitFor(() => expect(store.health().state).toBe("ok"), { timeout: 20_000 });
      }
      await vi.waitFor(async () => expect((await other.snapshot("x"))?.slotIds).toEqual(["a1"]), {
        timeout: 10_000,
      });
      expect(await other.acquire("x", { slotId: "b2", waitMs: 0 })).not.toMatchObject({
        type: "granted",
      });
      expect(await holder.release("x", "a1")).toMatchObject({ released: true });
    } finally {
      await Promise.all([holder.close(), other.close()]);
      await deleteKeysUnder(prefix, { nodes: cluster.nodes });
    }
  }, 60_000);
});
