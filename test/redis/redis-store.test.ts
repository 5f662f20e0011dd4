import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { RedisSlotStore } from "../../adapters/redis/index.js";
import { createRedisSlotStore, DEFAULT_RESTORE_GRACE_MS } from "../../adapters/redis/index.js";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import { PoolNotFoundError } from "../../src/errors.js";
import type { HeldSlot, StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import {
  deleteKeys,
  keysUnder,
  openStore,
  REDIS_URL,
  requireRedis,
  uniquePrefix,
} from "./redis-harness.js";

const available = await requireRedis("the Redis store tests");

const POOL: StorePoolConfig = { ...BASE_POOL, queueSize: 5, requestTimeoutMs: 25_000 };

describe.skipIf(!available)("RedisSlotStore", () => {
  const prefix = uniquePrefix("store");
  const stores: RedisSlotStore[] = [];
  let admin: Redis | undefined;

  async function open(): Promise<{ store: RedisSlotStore; clock: ManualClock }> {
    const opened = await openStore(prefix);
    stores.push(opened.store);
    return opened;
  }

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await deleteKeys(prefix);
  });
  afterAll(async () => {
    admin?.disconnect();
    await deleteKeys(prefix);
  });

  it("grants, renews up to the request deadline, then answers capped; release is idempotent", async () => {
    const { store, clock } = await open();
    await store.upsertPool("llm", POOL);
    const start = clock.now();

    const granted = await store.acquire("llm", { slotId: "s1", waitMs: 0 });
    expect(granted).toEqual({
      type: "granted",
      slot: {
        slotId: "s1",
        acquiredAt: start,
        leaseDeadline: start + 10_000,
        requestDeadline: start + 25_000,
        heldAtGrant: 1,
      },
      figures: { held: 1, queued: 0, limit: 1 },
    });
    await clock.advance(9_000);
    expect(await store.renew("llm", "s1")).toEqual({
      type: "renewed",
      leaseDeadline: start + 19_000,
    });
    await clock.advance(9_000);
    expect(await store.renew("llm", "s1")).toEqual({
      type: "renewed",
      leaseDeadline: start + 25_000,
    });
    expect(await store.renew("llm", "s1")).toEqual({
      type: "capped",
      requestDeadline: start + 25_000,
    });

    const released = await store.release("llm", "s1");
    expect(released.released).toBe(true);
    expect(released.slot?.leaseDeadline).toBe(start + 25_000);
    expect(await store.release("llm", "s1")).toEqual({ released: false });
    expect(await store.renew("llm", "s1")).toEqual({ type: "not_found" });
  });

  it("queues with a wait budget, hands over on release, and cancel tells who won", async () => {
    const { store } = await open();
    const handed: HeldSlot[] = [];
    store.setListener({ granted: (_pool, slot) => handed.push(slot), reclaimed() {} });
    await store.upsertPool("llm", POOL);
    await store.acquire("llm", { slotId: "s1", waitMs: 0 });

    expect(await store.acquire("llm", { slotId: "w1", waitMs: 5_000 })).toMatchObject({
      type: "queued",
    });
    expect(await store.acquire("llm", { slotId: "w2", waitMs: 5_000 })).toMatchObject({
      type: "queued",
    });
    expect(await store.acquire("llm", { slotId: "n1", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "concurrency",
    });
    expect(await store.cancel("llm", "w2")).toEqual({ type: "cancelled" });

    await store.release("llm", "s1");
    expect(handed.map((slot) => slot.slotId)).toEqual(["w1"]);
    expect(await store.cancel("llm", "w1")).toEqual({ type: "granted", slot: handed[0] });
    expect(await store.cancel("llm", "w2")).toEqual({ type: "unknown" });
  });

  it("enforces maxConcurrent and the queue bound", async () => {
    const { store } = await open();
    await store.upsertPool("llm", { ...POOL, maxConcurrent: 2, queueSize: 1 });
    await store.acquire("llm", { slotId: "s1", waitMs: 0 });
    await store.acquire("llm", { slotId: "s2", waitMs: 0 });
    await store.acquire("llm", { slotId: "w1", waitMs: 1_000 });
    expect(await store.acquire("llm", { slotId: "w2", waitMs: 1_000 })).toEqual({
      type: "rejected",
      reason: "queue_full",
      retryAfterMs: null,
      figures: { held: 2, queued: 1, limit: 2 },
    });
  });

  it("costs one round trip per acquire, release, renew and cancel", async () => {
    const { store } = await open();
    await store.upsertPool("llm", { ...POOL, maxConcurrent: 100 });
    const before = store.stats().roundTrips;
    for (let i = 0; i < 10; i++) await store.acquire("llm", { slotId: `s${i}`, waitMs: 0 });
    expect(store.stats().roundTrips - before).toBe(10);
    await store.renew("llm", "s0");
    await store.release("llm", "s0");
    await store.cancel("llm", "s1");
    expect(store.stats().roundTrips - before).toBe(13);
  });

  it("re-defines a pool in one round trip once the process knows where it lives", async () => {
    const { store } = await open();
    await store.upsertPool("llm", POOL);
    const before = store.stats().roundTrips;
    await store.upsertPool("llm", { ...POOL, maxConcurrent: 3 });
    expect(store.stats().roundTrips - before).toBe(1);
    expect((await store.snapshot("llm"))?.limit).toBe(3);
  });

  it("keeps a budget's pools under one hash tag, every key under the prefix", async () => {
    const { store } = await open();
    await store.upsertBudget("team", 4);
    const inBudget = (reserved: number) => ({
      ...POOL,
      budget: { id: "team", reservedConcurrent: reserved },
    });
    await store.upsertPool("chat", inBudget(1));
    await store.upsertPool("embed{x}:odd", inBudget(1));
    await store.upsertPool("solo", POOL);
    for (const pool of ["chat", "embed{x}:odd", "solo"]) {
      await store.acquire(pool, { slotId: `${pool}-1`, waitMs: 0 });
      await store.acquire(pool, { slotId: `${pool}-2`, waitMs: 1_000 });
    }

    const keys = await keysUnder(prefix);
    expect(keys.every((key) => key.startsWith(prefix))).toBe(true);
    const tags = new Set(keys.filter((key) => !key.endsWith(":home")).map(hashTag));
    // Nothing outside the groups: each group keeps its own epoch, which tells a group whose
    // shard lost its data from a removed pool.
    expect(tags).toEqual(new Set(["b:team", "p:solo"]));
    expect(keys).toEqual(
      expect.arrayContaining([`${prefix}{b:team}:epoch`, `${prefix}{p:solo}:epoch`]),
    );
    // Home pointers live in each pool's own slot; odd names never break the tag.
    const homes = keys.filter((key) => key.endsWith(":home")).map(hashTag);
    expect(homes.sort()).toEqual(["p:chat", "p:embed%7Bx%7D%3Aodd", "p:solo"]);
  });

  it("loads its code again when the server lost it (function not found, NOSCRIPT)", async () => {
    const { store } = await open();
    await store.upsertPool("llm", { ...POOL, maxConcurrent: 10 });
    admin ??= new Redis(REDIS_URL);
    const reloadsBefore = store.stats().scriptReloads;
    // Other test files share the server and may load the scripts again between the flush and
    // the call: a few tries make sure this store meets NOSCRIPT at least once.
    for (let attempt = 0; attempt < 5; attempt++) {
      await admin.function("FLUSH");
      await admin.script("FLUSH");
      expect(await store.acquire("llm", { slotId: `s${attempt}`, waitMs: 0 })).toMatchObject({
        type: "granted",
      });
      if (store.stats().scriptReloads > reloadsBefore) break;
    }
    expect(store.stats().scriptReloads).toBeGreaterThan(reloadsBefore);
    // The library (or the script) is loaded again: the next call finds it.
    const reloads = store.stats().scriptReloads;
    await store.acquire("llm", { slotId: "again", waitMs: 0 });
    expect(store.stats().scriptReloads).toBe(reloads);
  });

  it("re-creates a pool Redis lost (a flush) on the next acquire, paused for the restore grace", async () => {
    const { store, clock } = await open();
    await store.upsertBudget("team", 1);
    await store.upsertPool("llm", {
      ...POOL,
      maxConcurrent: 5,
      budget: { id: "team", reservedConcurrent: 0 },
    });
    await deleteKeys(prefix);

    expect(await store.acquire("llm", { slotId: "s1", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "paused",
    });
    await clock.advance(DEFAULT_RESTORE_GRACE_MS);
    expect(await store.acquire("llm", { slotId: "s1", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    // The budget came back too: its ceiling of 1 still holds.
    expect(await store.acquire("llm", { slotId: "s2", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "budget",
    });
  });

  it("refuses an acquire in a pool it does not know, and answers the rest as for a removed pool", async () => {
    const { store } = await open();
    await expect(store.acquire("nowhere", { slotId: "s1", waitMs: 0 })).rejects.toBeInstanceOf(
      PoolNotFoundError,
    );
    expect(await store.release("nowhere", "s1")).toEqual({ released: false });
    expect(await store.snapshot("nowhere")).toBeNull();
  });

  it("runs on the server's TIME when no clock is injected, reclaiming on its own", async () => {
    const store = createRedisSlotStore({ url: REDIS_URL, prefix });
    stores.push(store);
    await store.ready();
    const reclaimed: string[] = [];
    const handed: HeldSlot[] = [];
    store.setListener({
      granted: (_pool, slot) => handed.push(slot),
      reclaimed: (_pool, ids) => reclaimed.push(...ids),
    });
    const serverNow = await store.now();
    expect(Math.abs(serverNow - Date.now())).toBeLessThan(1_000);

    await store.upsertPool("llm", { ...POOL, termMs: 150 });
    const first = await store.acquire("llm", { slotId: "s1", waitMs: 0 });
    if (first.type !== "granted") throw new Error("expected a grant");
    expect(first.slot.leaseDeadline - first.slot.acquiredAt).toBe(150);
    expect(first.slot.acquiredAt).toBeGreaterThanOrEqual(serverNow);
    await store.acquire("llm", { slotId: "w1", waitMs: 5_000 });

    // Nobody renews s1: the local wake-up timer reclaims it and serves w1, no polling.
    await vi.waitFor(() => expect(handed.map((slot) => slot.slotId)).toEqual(["w1"]), {
      timeout: 2_000,
      interval: 20,
    });
    expect(reclaimed).toEqual(["s1"]);
    expect(handed[0]!.acquiredAt).toBeGreaterThanOrEqual(first.slot.leaseDeadline);
  });
});

/** The hash tag Redis Cluster hashes: text between the first `{` and the next `}`. */
function hashTag(key: string): string {
  const open = key.indexOf("{");
  const close = key.indexOf("}", open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
}
