import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RedisSlotStore } from "../../adapters/redis/index.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { StorePoolConfig } from "../../src/store/types.js";
import { describeGovernorRegressions } from "../store-conformance/governor-regressions.js";
import { describeStoreConformance } from "../store-conformance/store-conformance.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { redisStoreHarness } from "./conformance-harness.js";
import { deleteKeys, openStore, REDIS_URL, requireRedis, uniquePrefix } from "./redis-harness.js";

const available = await requireRedis("the Redis scripting tests");

const POOL: StorePoolConfig = { ...BASE_POOL, maxConcurrent: 2, queueSize: 5 };

// A user the server refuses Functions to (as some managed services and ACLs do): its stores
// run every operation as a script (EVALSHA), which must keep every rule.
const user = `sluice-no-functions-${randomUUID().slice(0, 8)}`;
const password = randomUUID();
const noFunctionsUrl = (() => {
  const url = new URL(REDIS_URL);
  url.username = user;
  url.password = password;
  return url.toString();
})();

describe.skipIf(!available)("Redis store scripting", () => {
  const prefixes: string[] = [];
  const stores: RedisSlotStore[] = [];
  let admin: Redis;

  beforeAll(async () => {
    admin = new Redis(REDIS_URL);
    await admin.call(
      "ACL",
      "SETUSER",
      user,
      "on",
      `>${password}`,
      "~*",
      "&*",
      "+@all",
      "-function",
      "-fcall",
      "-fcall_ro",
    );
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeys(prefix);
    await admin.call("ACL", "DELUSER", user);
    admin.disconnect();
  });

  async function open(prefix: string, clock: ManualClock, url = REDIS_URL) {
    const { store } = await openStore(prefix, { url, clock });
    stores.push(store);
    return store;
  }

  it("loads one Functions library and calls it, a lone acquire in one round trip", async () => {
    const prefix = uniquePrefix("scripting");
    prefixes.push(prefix);
    const store = await open(prefix, new ManualClock());
    expect(store.stats().scripting).toBe("functions");
    const libraries = (await admin.call(
      "FUNCTION",
      "LIST",
      "LIBRARYNAME",
      "sluice_*",
    )) as unknown[];
    expect(JSON.stringify(libraries)).toMatch(/sluice_acquire_[0-9a-f]{16}/);
    await store.upsertPool("llm", POOL);
    const before = store.stats().roundTrips;
    expect(await store.acquire("llm", { slotId: "s1", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    expect(store.stats().roundTrips - before).toBe(1);
  });

  it("runs scripts (EVALSHA) where the server refuses Functions, sharing the limit with FCALL", async () => {
    const prefix = uniquePrefix("scripting");
    prefixes.push(prefix);
    const clock = new ManualClock();
    // Two processes of a rolling change: one calls the library, one the scripts.
    const withFunctions = await open(prefix, clock);
    const withScripts = await open(prefix, clock, noFunctionsUrl);
    expect(withScripts.stats().scripting).toBe("eval");
    await withFunctions.upsertPool("llm", POOL);
    await withScripts.upsertPool("llm", POOL);

    expect(await withScripts.acquire("llm", { slotId: "a", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    expect(await withFunctions.acquire("llm", { slotId: "b", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    expect(await withScripts.acquire("llm", { slotId: "c", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "concurrency",
    });
    expect(await withScripts.acquire("llm", { slotId: "w", waitMs: 5_000 })).toMatchObject({
      type: "queued",
    });
    // A release through the library hands the slot to the scripts' waiter, in Redis.
    expect(await withFunctions.release("llm", "b")).toMatchObject({ released: true });
    expect((await withScripts.snapshot("llm"))?.slotIds.sort()).toEqual(["a", "w"]);
  });

  describeStoreConformance(
    "redis (EVALSHA)",
    redisStoreHarness(() => ({ url: noFunctionsUrl }), deleteKeys, prefixes),
  );
  describeGovernorRegressions(
    "redis (EVALSHA)",
    redisStoreHarness(() => ({ url: noFunctionsUrl }), deleteKeys, prefixes),
  );
});
