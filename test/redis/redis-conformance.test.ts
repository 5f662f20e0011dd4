import { afterAll, describe } from "vitest";
import { describeGovernorProperties } from "../store-conformance/governor-properties.js";
import { describeGovernorRegressions } from "../store-conformance/governor-regressions.js";
import { describeStoreConformance } from "../store-conformance/store-conformance.js";
import { redisStoreHarness } from "./conformance-harness.js";
import { deleteKeys, REDIS_URL, requireRedis } from "./redis-harness.js";

const available = await requireRedis("the Redis store conformance suite");
const prefixes: string[] = [];

const redisHarness = redisStoreHarness(() => ({ url: REDIS_URL }), deleteKeys, prefixes);

describe.skipIf(!available)("RedisSlotStore", () => {
  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeys(prefix);
  });
  describeStoreConformance("redis", redisHarness);
  describeGovernorProperties("redis", redisHarness);
  describeGovernorRegressions("redis", redisHarness);
});
