import { afterAll, beforeAll, describe } from "vitest";
import { createRedisSlotStore, deleteKeysUnder } from "../../adapters/redis/index.js";
import { describeGovernorProperties } from "../store-conformance/governor-properties.js";
import { describeGovernorRegressions } from "../store-conformance/governor-regressions.js";
import {
  describeStoreConformance,
  type StoreHarness,
} from "../store-conformance/store-conformance.js";
import {
  requireClusterBinaries,
  startTestCluster,
  type TestCluster,
} from "./redis-cluster-harness.js";
import { uniquePrefix } from "./redis-harness.js";
import { SettlingClock, trackCalls } from "./settling-clock.js";

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

  async function clusterHarness(): Promise<StoreHarness> {
    const clock = new SettlingClock();
    const prefix = uniquePrefix("cluster-conformance");
    const store = trackCalls(
      createRedisSlotStore({ cluster: { nodes: cluster.nodes }, prefix, clock }),
      clock,
    );
    await store.ready();
    return {
      store,
      clock,
      cleanup: async () => {
        await store.close();
        await deleteKeysUnder(prefix, { nodes: cluster.nodes });
      },
    };
  }

  describeStoreConformance("redis-cluster", clusterHarness);
  describeGovernorProperties("redis-cluster", clusterHarness);
  describeGovernorRegressions("redis-cluster", clusterHarness);
});
