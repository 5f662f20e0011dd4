import { afterAll, describe } from "vitest";
import { createRedisSlotStore } from "../../adapters/redis/index.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { describeGovernorProperties } from "../store-conformance/governor-properties.js";
import {
  describeStoreConformance,
  type StoreHarness,
} from "../store-conformance/store-conformance.js";
import { deleteKeys, REDIS_URL, requireRedis, uniquePrefix } from "./redis-harness.js";

const available = await requireRedis("the Redis store conformance suite");
const prefixes: string[] = [];

/** A fresh store per test: its own key prefix, so no state leaks between tests. */
async function redisHarness(): Promise<StoreHarness> {
  const clock = new ManualClock();
  const prefix = uniquePrefix("conformance");
  prefixes.push(prefix);
  const store = createRedisSlotStore({ url: REDIS_URL, prefix, clock });
  await store.ready();
  return {
    store,
    clock,
    cleanup: async () => {
      await store.close();
      await deleteKeys(prefix);
    },
  };
}

describe.skipIf(!available)("RedisSlotStore", () => {
  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeys(prefix);
  });
  describeStoreConformance("redis", redisHarness);
  describeGovernorProperties("redis", redisHarness);
});
