import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { RedisSlotStore } from "../../adapters/redis/index.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { HeldSlot, StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { deleteKeys, openStore, requireRedis, uniquePrefix } from "./redis-harness.js";

// Redis loses its data while every process stays connected (FLUSHALL, FLUSHDB, keys deleted
// by hand): no dropped connection tells anyone. The first process to find its pool gone must
// bring it back paused, and every process must adopt its slots still in use before anyone is
// admitted on top of them. Deleting this suite's keys is what a FLUSHALL does to them.

const available = await requireRedis("the Redis data-loss tests");

const POOL: StorePoolConfig = { ...BASE_POOL, maxConcurrent: 2, queueSize: 10 };
const RESTORE_GRACE_MS = 500;

describe.skipIf(!available)("a Redis that loses its data while connected", () => {
  const prefix = uniquePrefix("data-loss");
  const opened: RedisSlotStore[] = [];

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await deleteKeys(prefix);
  });
  afterAll(() => deleteKeys(prefix));

  /** One process on the shared clock, with the pool defined; `grants` lists its handoffs. */
  async function process(clock: ManualClock) {
    const { store } = await openStore(prefix, { clock, restoreGraceMs: RESTORE_GRACE_MS });
    opened.push(store);
    await store.upsertPool("llm", POOL);
    const grants: HeldSlot[] = [];
    store.setListener({ granted: (_pool, slot) => grants.push(slot), reclaimed() {} });
    return { store, grants };
  }

  it("every process adopts its slots back before anyone is admitted on top of them", async () => {
    const clock = new ManualClock();
    const a = await process(clock);
    const b = await process(clock);
    const pool = { ...POOL, maxConcurrent: 3 };
    await a.store.upsertPool("llm", pool);
    await b.store.upsertPool("llm", pool);
    expect(await a.store.acquire("llm", { slotId: "a1", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    expect(await b.store.acquire("llm", { slotId: "b1", waitMs: 0 })).toMatchObject({
      type: "granted",
    });

    await deleteKeys(prefix);

    // a finds its pool gone: it comes back paused, and b hears of the loss.
    expect(await a.store.acquire("llm", { slotId: "a2", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "paused",
    });
    await vi.waitFor(async () =>
      expect((await a.store.snapshot("llm"))?.slotIds.sort()).toEqual(["a1", "b1"]),
    );
    await clock.advance(RESTORE_GRACE_MS);
    expect(await a.store.acquire("llm", { slotId: "a3", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    expect(await b.store.acquire("llm", { slotId: "b2", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "concurrency",
    });
    // b's caller never notices: its slot renews and releases as usual, and the freed place
    // goes to the next caller.
    expect(await b.store.renew("llm", "b1")).toMatchObject({ type: "renewed" });
    expect(await b.store.release("llm", "b1")).toMatchObject({ released: true });
    expect(await b.store.acquire("llm", { slotId: "b3", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
  });

  it("a waiter queued before the loss is queued again, in its place", async () => {
    const clock = new ManualClock();
    const a = await process(clock);
    const b = await process(clock);
    await a.store.acquire("llm", { slotId: "a1", waitMs: 0 });
    await a.store.acquire("llm", { slotId: "a2", waitMs: 0 });
    expect(await b.store.acquire("llm", { slotId: "b1", waitMs: 60_000 })).toMatchObject({
      type: "queued",
    });

    await deleteKeys(prefix);

    expect(await a.store.renew("llm", "a1")).toMatchObject({ type: "renewed" });
    await vi.waitFor(async () =>
      expect(await a.store.snapshot("llm")).toMatchObject({
        slotIds: ["a1", "a2"],
        waiterIds: ["b1"],
      }),
    );
    await clock.advance(RESTORE_GRACE_MS);
    await a.store.release("llm", "a1");
    await vi.waitFor(() => expect(b.grants.map((slot) => slot.slotId)).toEqual(["b1"]));
  });

  it("a lone process finds out at its next renewal, and keeps its slot", async () => {
    const clock = new ManualClock();
    const a = await process(clock);
    await a.store.acquire("llm", { slotId: "a1", waitMs: 0 });

    await deleteKeys(prefix);

    expect(await a.store.renew("llm", "a1")).toMatchObject({ type: "renewed" });
    expect(await a.store.snapshot("llm")).toMatchObject({ slotIds: ["a1"] });
  });

  /** Lets a published event reach the other process's subscriber connection. */
  const eventsDelivered = () => new Promise((resolve) => setTimeout(resolve, 100));

  it("a slot renewed through another process is adopted with the lease that renewal gave", async () => {
    const clock = new ManualClock();
    const a = await process(clock);
    const b = await process(clock);
    await a.store.acquire("llm", { slotId: "a1", waitMs: 0 });
    // The Lock API caller renews through another server, past the lease a first granted.
    await clock.advance(BASE_POOL.termMs * 0.6);
    expect(await b.store.renew("llm", "a1")).toMatchObject({ type: "renewed" });
    await clock.advance(BASE_POOL.termMs * 0.6);
    await eventsDelivered();

    await deleteKeys(prefix);

    expect(await b.store.acquire("llm", { slotId: "b1", waitMs: 0 })).toMatchObject({
      reason: "paused",
    });
    await vi.waitFor(async () => expect((await a.store.snapshot("llm"))?.slotIds).toEqual(["a1"]));
    expect(await b.store.renew("llm", "a1")).toMatchObject({ type: "renewed" });
  });

  it("a slot released through another process is not adopted again", async () => {
    const clock = new ManualClock();
    const a = await process(clock);
    const b = await process(clock);
    await a.store.acquire("llm", { slotId: "a1", waitMs: 0 });
    await a.store.acquire("llm", { slotId: "a2", waitMs: 0 });
    expect(await b.store.release("llm", "a1")).toMatchObject({ released: true });
    await eventsDelivered();

    await deleteKeys(prefix);

    expect(await b.store.acquire("llm", { slotId: "b1", waitMs: 0 })).toMatchObject({
      reason: "paused",
    });
    await vi.waitFor(async () => expect((await a.store.snapshot("llm"))?.slotIds).toEqual(["a2"]));
    await clock.advance(RESTORE_GRACE_MS);
    // The place a1 held is free: nobody waits a term for a phantom.
    expect(await b.store.acquire("llm", { slotId: "b2", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
  });

  it("a pool another process removed comes back at once, without a pause", async () => {
    const clock = new ManualClock();
    const a = await process(clock);
    const b = await process(clock);
    await a.store.acquire("llm", { slotId: "a1", waitMs: 0 });
    // b's catalog dropped the pool; a's has not heard yet and still uses it.
    await b.store.removePool("llm");

    expect(await a.store.acquire("llm", { slotId: "a2", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    expect(await a.store.renew("llm", "a1")).toMatchObject({ type: "not_found" });
  });
});
