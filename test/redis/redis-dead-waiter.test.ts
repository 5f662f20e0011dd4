import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { recordingStores, requireRedis } from "./redis-harness.js";

// A process that dies leaves its waiters queued in Redis (nobody cancels them). A handoff to
// one of them would hold a slot nobody uses until its lease ran out; the scripts skip a
// waiter whose process no longer listens to the group's events.

const available = await requireRedis("the Redis dead-waiter tests");

const POOL: StorePoolConfig = BASE_POOL;

describe.skipIf(!available)("RedisSlotStore with a dead process's waiters", () => {
  const stores = recordingStores("dead-waiter");

  async function open(clock: ManualClock) {
    const opened = await stores.open(clock);
    await opened.store.upsertPool("llm", POOL);
    return opened;
  }

  it("hands a released slot past a dead process's waiter to the next live one at once", async () => {
    const clock = new ManualClock();
    const live = await open(clock);
    const dying = await open(clock);
    await live.store.acquire("llm", { slotId: "l1", waitMs: 0 });
    expect(await dying.store.acquire("llm", { slotId: "d1", waitMs: 30_000 })).toMatchObject({
      type: "queued",
    });
    await dying.store.close(); // its connection goes, as with kill -9
    await live.store.acquire("llm", { slotId: "l2", waitMs: 30_000 });

    await clock.advance(100);
    expect(await live.store.release("llm", "l1")).toMatchObject({ released: true });
    expect(live.grants.map((slot) => [slot.slotId, slot.acquiredAt])).toEqual([
      ["l2", clock.now()],
    ]);
    const snapshot = await live.store.snapshot("llm");
    expect(snapshot?.slotIds).toEqual(["l2"]);
    expect(snapshot?.waiterIds).toEqual([]);
  });

  it("still hands slots to a waiter of another live process", async () => {
    const clock = new ManualClock();
    const first = await open(clock);
    const second = await open(clock);
    await first.store.acquire("llm", { slotId: "a1", waitMs: 0 });
    await second.store.acquire("llm", { slotId: "b1", waitMs: 30_000 });
    await first.store.acquire("llm", { slotId: "a2", waitMs: 30_000 });

    await first.store.release("llm", "a1");
    await expect.poll(() => second.grants.map((slot) => slot.slotId)).toEqual(["b1"]);
    expect(first.grants).toEqual([]);
    expect((await first.store.snapshot("llm"))?.waiterIds).toEqual(["a2"]);
  });
});
