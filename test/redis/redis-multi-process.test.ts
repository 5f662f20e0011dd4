import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { RedisSlotStore } from "../../adapters/redis/index.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { HeldSlot, StoreListener, StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { deleteKeys, openStore, requireRedis, uniquePrefix } from "./redis-harness.js";

const available = await requireRedis("the Redis multi-process tests");

const POOL: StorePoolConfig = BASE_POOL;

/** What one process's governor would hear from its store. */
class Heard implements StoreListener {
  readonly grants: HeldSlot[] = [];
  readonly reclaims: string[] = [];
  granted(_pool: string, slot: HeldSlot): void {
    this.grants.push(slot);
  }
  reclaimed(_pool: string, slotIds: readonly string[]): void {
    this.reclaims.push(...slotIds);
  }
  grantedIds(): string[] {
    return this.grants.map((slot) => slot.slotId);
  }
}

/**
 * Two stores with their own connections on one prefix behave as two Sluice processes sharing
 * one Redis; one ManualClock stands for the time both see.
 */
describe.skipIf(!available)("RedisSlotStore across processes", () => {
  const prefix = uniquePrefix("multi");
  const stores: RedisSlotStore[] = [];

  async function processes(count: number, clock = new ManualClock()) {
    const opened = [];
    for (let i = 0; i < count; i++) {
      const { store } = await openStore(prefix, { clock });
      const heard = new Heard();
      store.setListener(heard);
      stores.push(store);
      opened.push({ store, heard });
    }
    return { clock, opened };
  }

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await deleteKeys(prefix);
  });
  afterAll(() => deleteKeys(prefix));

  it("shares one limit and one FIFO queue, and wakes the waiter in the other process", async () => {
    const { opened } = await processes(2);
    const [a, b] = opened as [(typeof opened)[0], (typeof opened)[0]];
    await a.store.upsertPool("llm", POOL);
    await b.store.upsertPool("llm", POOL);

    expect(await a.store.acquire("llm", { slotId: "a1", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    expect(await b.store.acquire("llm", { slotId: "b1", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "concurrency",
    });
    expect(await b.store.acquire("llm", { slotId: "b2", waitMs: 60_000 })).toMatchObject({
      type: "queued",
      figures: { held: 1, queued: 1 },
    });
    expect(await a.store.acquire("llm", { slotId: "a2", waitMs: 60_000 })).toMatchObject({
      type: "queued",
      figures: { held: 1, queued: 2 },
    });

    await a.store.release("llm", "a1");
    // b hears of its handoff by Pub/Sub; a, whose release made it, is not told of b's slot.
    await vi.waitFor(() => expect(b.heard.grantedIds()).toEqual(["b2"]));
    expect(a.heard.grantedIds()).toEqual([]);

    await b.store.release("llm", "b2");
    await vi.waitFor(() => expect(a.heard.grantedIds()).toEqual(["a2"]));
    expect(b.heard.grantedIds()).toEqual(["b2"]);
    expect((await b.store.snapshot("llm"))?.slotIds).toEqual(["a2"]);
  });

  it("never grants more than the limit to concurrent acquires from several processes", async () => {
    const { opened } = await processes(3);
    for (const { store } of opened) await store.upsertPool("llm", { ...POOL, maxConcurrent: 5 });
    const attempts = opened.flatMap(({ store }, p) =>
      Array.from({ length: 20 }, (_, i) =>
        store.acquire("llm", { slotId: `p${p}-${i}`, waitMs: 0 }),
      ),
    );
    const results = await Promise.all(attempts);
    expect(results.filter((result) => result.type === "granted")).toHaveLength(5);
    expect((await opened[0]!.store.snapshot("llm"))?.held).toBe(5);
  });

  it("reclaims a dead process's slot when its lease runs out and skips its expired waiters", async () => {
    const { clock, opened } = await processes(2);
    const [dying, survivor] = opened as [(typeof opened)[0], (typeof opened)[0]];
    await dying.store.upsertPool("llm", POOL);
    await survivor.store.upsertPool("llm", POOL);
    await dying.store.acquire("llm", { slotId: "d1", waitMs: 0 });
    await dying.store.acquire("llm", { slotId: "d2", waitMs: 5_000 });
    await survivor.store.acquire("llm", { slotId: "s1", waitMs: 60_000 });
    // The process dies: no release, no renewal, no cancel of its waiter.
    await dying.store.close();

    await clock.advance(9_999);
    await survivor.store.whenIdle();
    expect(survivor.heard.grants).toEqual([]);
    await clock.advance(1);
    await survivor.store.whenIdle();
    // d1 was reclaimed (only its dead owner would have been told); d2's wait ran out while
    // it stood first in line: it is skipped, and s1 gets the slot.
    expect(survivor.heard.reclaims).toEqual([]);
    expect(survivor.heard.grantedIds()).toEqual(["s1"]);
    expect(survivor.heard.grants[0]?.acquiredAt).toBe(clock.now());
    expect((await survivor.store.snapshot("llm"))?.slotIds).toEqual(["s1"]);
    expect(await survivor.store.release("llm", "d1")).toEqual({ released: false });
  });

  it("tells the owner when another process reclaims its slot", async () => {
    // The owner's clock stands still (a stalled event loop): only the other process acts.
    const [owner] = (await processes(1, new ManualClock())).opened;
    const { clock, opened } = await processes(1);
    const other = opened[0]!;
    await owner!.store.upsertPool("llm", POOL);
    await other.store.upsertPool("llm", POOL);
    await owner!.store.acquire("llm", { slotId: "o1", waitMs: 0 });

    await clock.advance(10_000);
    expect(await other.store.acquire("llm", { slotId: "x1", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    await vi.waitFor(() => expect(owner!.heard.reclaims).toEqual(["o1"]));
    expect(other.heard.reclaims).toEqual([]);
  });

  it("does not let a dead process's expired waiters fill the queue", async () => {
    const { clock, opened } = await processes(2);
    const [dying, survivor] = opened as [(typeof opened)[0], (typeof opened)[0]];
    await dying.store.upsertPool("llm", { ...POOL, queueSize: 2 });
    await survivor.store.upsertPool("llm", { ...POOL, queueSize: 2 });
    await survivor.store.acquire("llm", { slotId: "s1", waitMs: 0 });
    await survivor.store.acquire("llm", { slotId: "s2", waitMs: 60_000 });
    await dying.store.acquire("llm", { slotId: "d1", waitMs: 100 });
    await dying.store.close();
    await clock.advance(101);

    // s2 is live and first, d1's wait is over: the newcomer takes d1's place.
    expect(await survivor.store.acquire("llm", { slotId: "s3", waitMs: 60_000 })).toMatchObject({
      type: "queued",
      figures: { queued: 2 },
    });
    expect((await survivor.store.snapshot("llm"))?.waiterIds).toEqual(["s2", "s3"]);
  });
});
