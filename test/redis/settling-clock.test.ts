import { afterEach, describe, expect, it } from "vitest";
import { createRedisSlotStore, type RedisSlotStore } from "../../adapters/redis/index.js";
import type { StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { deleteKeys, REDIS_URL, requireRedis, uniquePrefix } from "./redis-harness.js";
import { SettlingClock, trackCalls } from "./settling-clock.js";

const available = await requireRedis("the settling clock tests");

const POOL: StorePoolConfig = { ...BASE_POOL, queueSize: 2, termMs: 100, requestTimeoutMs: 100 };

/**
 * The clock the Redis conformance and property suites run on: each instant's scripts answer
 * before time moves on. Without it, a plain ManualClock fires every timer of an advance while
 * the first script is still on the wire, and the suites judged latency the clock invented.
 */
describe.skipIf(!available)("SettlingClock over the Redis store", () => {
  const prefix = uniquePrefix("settling");
  let store: RedisSlotStore | undefined;

  afterEach(async () => {
    await store?.close();
    await deleteKeys(prefix);
  });

  async function open(): Promise<{ clock: SettlingClock; store: RedisSlotStore; log: string[] }> {
    const clock = new SettlingClock();
    store = trackCalls(createRedisSlotStore({ url: REDIS_URL, prefix, clock }), clock);
    await store.ready();
    const start = clock.now();
    const log: string[] = [];
    store.setListener({
      granted: (_pool, slot, queuedMs) =>
        log.push(`granted ${slot.slotId} at ${slot.acquiredAt - start} after ${queuedMs}`),
      reclaimed: (_pool, slotIds) => log.push(`reclaimed ${slotIds.join(",")}`),
    });
    await store.upsertPool("p", POOL);
    return { clock, store, log };
  }

  it("delivers the handoff at a lease deadline before a timer due later in the same advance", async () => {
    const { clock, store, log } = await open();
    await store.acquire("p", { slotId: "holder", waitMs: 0 });
    await store.acquire("p", { slotId: "first", waitMs: 200 });
    await store.acquire("p", { slotId: "second", waitMs: 300 });
    clock.setTimeout(() => log.push("timer at 150"), 150);

    await clock.advance(250);

    expect(log).toEqual([
      "reclaimed holder",
      "granted first at 100 after 100",
      "timer at 150",
      "reclaimed first",
      "granted second at 200 after 200",
    ]);
  });

  it("answers a call a timer makes before the next timer fires", async () => {
    const { clock, store, log } = await open();
    await store.acquire("p", { slotId: "holder", waitMs: 0 });
    await store.acquire("p", { slotId: "waiter", waitMs: 200 });
    clock.setTimeout(() => {
      void store.cancel("p", "waiter").then((answer) => log.push(`cancel: ${answer.type}`));
    }, 50);
    clock.setTimeout(() => log.push("timer at 51"), 51);

    await clock.advance(60);

    expect(log).toEqual(["cancel: cancelled", "timer at 51"]);
    expect((await store.snapshot("p"))?.waiterIds).toEqual([]);
  });
});
