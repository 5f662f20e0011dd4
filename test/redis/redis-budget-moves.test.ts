import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { RedisSlotStore } from "../../adapters/redis/index.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { ConflictError } from "../../src/errors.js";
import type { StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { deleteKeys, keysUnder, openStore, requireRedis, uniquePrefix } from "./redis-harness.js";

const available = await requireRedis("the Redis budget move tests");

const SOLO: StorePoolConfig = { ...BASE_POOL, maxConcurrent: 2, queueSize: 5, rpm: 2 };
const IN_TEAM: StorePoolConfig = { ...SOLO, budget: { id: "team", reservedConcurrent: 0 } };

/**
 * A pool's keys live in its budget's hash slot, so joining or leaving a budget moves them.
 * The move happens only while the pool is idle; a busy pool refuses it rather than splitting
 * its limit over two places.
 */
describe.skipIf(!available)("RedisSlotStore pool moves between budgets", () => {
  const prefix = uniquePrefix("moves");
  const stores: RedisSlotStore[] = [];
  const clock = new ManualClock();

  async function open(): Promise<RedisSlotStore> {
    const { store } = await openStore(prefix, { clock });
    stores.push(store);
    return store;
  }

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await deleteKeys(prefix);
  });
  afterAll(() => deleteKeys(prefix));

  it("moves an idle pool into a budget with its learned limits and RPM window", async () => {
    const store = await open();
    await store.upsertPool("llm", SOLO);
    for (const slotId of ["s1", "s2"]) {
      await store.acquire("llm", { slotId, waitMs: 0 });
      await store.release("llm", slotId);
    }
    const learned = { concurrency: 1, rpm: null, pausedUntil: clock.now() + 5_000 };
    await store.setLearned("llm", learned);

    await store.upsertBudget("team", 10);
    await store.upsertPool("llm", IN_TEAM);

    expect(await store.snapshot("llm")).toMatchObject({ limit: 1, learned });
    await clock.advance(5_000);
    // Both grants of the last minute came along: the RPM gate of 2 is still closed.
    expect(await store.acquire("llm", { slotId: "s3", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "rpm",
      retryAfterMs: 55_000,
    });
    const keys = await keysUnder(prefix);
    expect(keys.filter((key) => key.includes("{b:team}:holders:"))).toEqual([]);
    expect(keys.some((key) => key.endsWith("{b:team}:pool:llm"))).toBe(true);
  });

  it("refuses to move a pool that holds slots, and leaves it working where it is", async () => {
    const store = await open();
    await store.upsertPool("llm", SOLO);
    await store.acquire("llm", { slotId: "s1", waitMs: 0 });

    await expect(store.upsertPool("llm", IN_TEAM)).rejects.toBeInstanceOf(ConflictError);
    expect((await store.snapshot("llm"))?.slotIds).toEqual(["s1"]);
    expect((await store.release("llm", "s1")).released).toBe(true);

    await store.upsertPool("llm", IN_TEAM);
    await clock.advance(60_000);
    expect(await store.acquire("llm", { slotId: "s2", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
  });

  it("lets a process with the old budget follow the move instead of splitting the limit", async () => {
    const mover = await open();
    const stale = await open();
    const one = { ...SOLO, maxConcurrent: 1, rpm: null };
    await mover.upsertPool("llm", one);
    await stale.upsertPool("llm", one);

    await mover.upsertPool("llm", { ...one, budget: { id: "team", reservedConcurrent: 0 } });
    await mover.acquire("llm", { slotId: "m1", waitMs: 0 });
    // The stale process still has the pool outside any budget: it follows the forwarding record.
    expect(await stale.acquire("llm", { slotId: "s1", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "concurrency",
      figures: { held: 1 },
    });
    expect((await stale.release("llm", "m1")).released).toBe(true);
  });

  it("makes a new process with another budget for a busy pool wait instead of splitting it", async () => {
    const first = await open();
    await first.upsertBudget("team", 10);
    await first.upsertPool("llm", IN_TEAM);
    await first.acquire("llm", { slotId: "f1", waitMs: 0 });

    // A process started with a config that has the pool outside the budget.
    const newcomer = await open();
    await expect(newcomer.upsertPool("llm", SOLO)).rejects.toBeInstanceOf(ConflictError);
    // Defined with the same budget, it shares the pool the first process uses.
    await newcomer.upsertPool("llm", IN_TEAM);
    expect((await newcomer.snapshot("llm"))?.slotIds).toEqual(["f1"]);
  });
});
