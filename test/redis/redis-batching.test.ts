import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { MAX_IN_FLIGHT } from "../../adapters/redis/group-batcher.js";
import {
  createRedisSlotStore,
  DEFAULT_RESTORE_GRACE_MS,
  type RedisSlotStore,
} from "../../adapters/redis/index.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { StoreUnavailableError } from "../../src/errors.js";
import type { StoreAcquireResult, StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { deleteKeys, REDIS_URL, recordingStores, requireRedis } from "./redis-harness.js";
import { TcpProxy } from "./tcp-proxy.js";

// Calls of one group made in one tick, or while calls are on the wire, share script calls (see
// adapters/redis/group-batcher.ts): at most MAX_IN_FLIGHT of them, applied in submission
// order, each call answered on its own. These tests pin that batches answer exactly what the
// calls one by one would have.

const available = await requireRedis("the Redis batching tests");

const POOL: StorePoolConfig = { ...BASE_POOL, maxConcurrent: 3 };

function types(results: readonly StoreAcquireResult[]): string[] {
  return results.map((result) =>
    result.type === "rejected" ? `rejected:${result.reason}` : result.type,
  );
}

describe.skipIf(!available)("RedisSlotStore batches", () => {
  const { prefix, open } = recordingStores("batching");

  it("admits one tick's acquires exactly up to the limit, in submission order, in one batch per place", async () => {
    const { store } = await open(new ManualClock());
    await store.upsertPool("llm", POOL);
    const before = store.stats().roundTrips;
    const ids = Array.from({ length: 10 }, (_, i) => `s${i}`);
    const results = await Promise.all(
      ids.map((slotId) => store.acquire("llm", { slotId, waitMs: 0 })),
    );
    expect(store.stats().roundTrips - before).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    expect(types(results)).toEqual([
      "granted",
      "granted",
      "granted",
      ...Array(7).fill("rejected:concurrency"),
    ]);
    expect(results.slice(0, 3).map((r) => (r.type === "granted" ? r.slot.slotId : ""))).toEqual([
      "s0",
      "s1",
      "s2",
    ]);
    expect((await store.snapshot("llm"))?.slotIds).toEqual(["s0", "s1", "s2"]);
  });

  it("queues one tick's waiters in submission order and hands freed slots over FIFO", async () => {
    const { store, grants } = await open(new ManualClock());
    await store.upsertPool("llm", POOL);
    await Promise.all(
      ["h0", "h1", "h2"].map((slotId) => store.acquire("llm", { slotId, waitMs: 0 })),
    );
    const waiters = ["w0", "w1", "w2", "w3", "w4"];
    const queued = await Promise.all(
      waiters.map((slotId) => store.acquire("llm", { slotId, waitMs: 30_000 })),
    );
    expect(types(queued)).toEqual(Array(5).fill("queued"));
    expect((await store.snapshot("llm"))?.waiterIds).toEqual(waiters);

    // Releases, a cancel and a newcomer in one tick: each sees the effects of the ones before.
    const before = store.stats().roundTrips;
    const [r0, r1, cancelled, newcomer] = await Promise.all([
      store.release("llm", "h0"),
      store.release("llm", "h1"),
      store.cancel("llm", "w2"),
      store.acquire("llm", { slotId: "late", waitMs: 0 }),
    ]);
    expect(store.stats().roundTrips - before).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    expect([r0.released, r1.released]).toEqual([true, true]);
    expect(cancelled).toEqual({ type: "cancelled" });
    expect(newcomer).toMatchObject({ type: "rejected", reason: "concurrency" });
    expect(grants.map((slot) => slot.slotId)).toEqual(["w0", "w1"]);
    const snapshot = await store.snapshot("llm");
    expect(snapshot?.slotIds).toEqual(["h2", "w0", "w1"]);
    expect(snapshot?.waiterIds).toEqual(["w3", "w4"]);
  });

  it("applies a batch mixing two pools of one budget in order", async () => {
    const { store, grants } = await open(new ManualClock());
    await store.upsertBudget("team", 2);
    const member = { ...POOL, maxConcurrent: 2, budget: { id: "team", reservedConcurrent: 0 } };
    await store.upsertPool("a", member);
    await store.upsertPool("b", member);

    const first = await Promise.all([
      store.acquire("a", { slotId: "a1", waitMs: 0 }),
      store.acquire("b", { slotId: "b1", waitMs: 0 }),
      store.acquire("a", { slotId: "a2", waitMs: 0 }),
    ]);
    expect(types(first)).toEqual(["granted", "granted", "rejected:budget"]);

    const before = store.stats().roundTrips;
    const [waiter, released, late] = await Promise.all([
      store.acquire("b", { slotId: "bw", waitMs: 30_000 }),
      // Frees the budget's share: the waiter of the other pool gets it in the same call.
      store.release("a", "a1"),
      store.acquire("a", { slotId: "a3", waitMs: 0 }),
    ]);
    expect(store.stats().roundTrips - before).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    expect(waiter.type).toBe("queued");
    expect(released.released).toBe(true);
    expect(late).toMatchObject({ type: "rejected", reason: "budget" });
    expect(grants.map((slot) => slot.slotId)).toEqual(["bw"]);
    expect((await store.snapshot("b"))?.slotIds).toEqual(["b1", "bw"]);
    expect((await store.snapshot("a"))?.held).toBe(0);
  });

  it("keeps a definition made between calls in its place", async () => {
    const { store } = await open(new ManualClock());
    await store.upsertPool("llm", { ...POOL, maxConcurrent: 1 });
    const [first, second, , third] = await Promise.all([
      store.acquire("llm", { slotId: "s1", waitMs: 0 }),
      store.acquire("llm", { slotId: "s2", waitMs: 0 }),
      store.upsertPool("llm", { ...POOL, maxConcurrent: 2 }),
      store.acquire("llm", { slotId: "s3", waitMs: 0 }),
    ]);
    // s2 still met the limit of 1, s3 the raised limit of 2.
    expect(types([first, second, third])).toEqual(["granted", "rejected:concurrency", "granted"]);
  });

  it("re-creates a pool Redis lost for every call of a batch, in order", async () => {
    const clock = new ManualClock();
    const { store } = await open(clock);
    await store.upsertPool("llm", { ...POOL, maxConcurrent: 2 });
    await deleteKeys(prefix);
    const acquireThree = () =>
      Promise.all(["s1", "s2", "s3"].map((slotId) => store.acquire("llm", { slotId, waitMs: 0 })));
    // Redis lost its data: the pool comes back paused for the restore grace.
    expect(types(await acquireThree())).toEqual(Array(3).fill("rejected:paused"));
    await clock.advance(DEFAULT_RESTORE_GRACE_MS);
    expect(types(await acquireThree())).toEqual(["granted", "granted", "rejected:concurrency"]);
    expect((await store.snapshot("llm"))?.slotIds).toEqual(["s1", "s2"]);
  });

  it("sends a batch again when the server lost the code (function not found, NOSCRIPT)", async () => {
    const { store } = await open(new ManualClock());
    await store.upsertPool("llm", { ...POOL, maxConcurrent: 100 });
    const admin = new Redis(REDIS_URL);
    try {
      const reloadsBefore = store.stats().scriptReloads;
      // Other test files share the server and may load the scripts again between the flush
      // and the calls: a few tries make sure a batch meets NOSCRIPT at least once.
      for (let attempt = 0; attempt < 5; attempt++) {
        await admin.function("FLUSH");
        await admin.script("FLUSH");
        const ids = [0, 1, 2, 3].map((i) => `s${attempt}-${i}`);
        const results = await Promise.all(
          ids.map((slotId) => store.acquire("llm", { slotId, waitMs: 0 })),
        );
        expect(types(results)).toEqual(Array(4).fill("granted"));
        if (store.stats().scriptReloads > reloadsBefore) break;
      }
      expect(store.stats().scriptReloads).toBeGreaterThan(reloadsBefore);
    } finally {
      admin.disconnect();
    }
  });

  it("keeps a lone acquire at one round trip", async () => {
    const { store } = await open(new ManualClock());
    await store.upsertPool("llm", POOL);
    const before = store.stats().roundTrips;
    expect(await store.acquire("llm", { slotId: "alone", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    expect(store.stats().roundTrips - before).toBe(1);
  });
});

describe.skipIf(!available)("RedisSlotStore batches when Redis fails", () => {
  const { prefix } = recordingStores("batching-failure");
  const stores: RedisSlotStore[] = [];
  const proxies: TcpProxy[] = [];

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const proxy of proxies.splice(0)) await proxy.stop();
    await deleteKeys(prefix);
  });
  afterAll(() => deleteKeys(prefix));

  it("fails every call of a batch with StoreUnavailableError and leaks no slot", async () => {
    const proxy = await TcpProxy.start(new URL(REDIS_URL));
    proxies.push(proxy);
    const store = createRedisSlotStore({
      url: proxy.url,
      prefix,
      clock: new ManualClock(),
      recoveryProbeMs: { min: 20, max: 100 },
      commandTimeoutMs: 300,
    });
    stores.push(store);
    await store.ready();
    await store.upsertPool("llm", POOL);
    await store.acquire("llm", { slotId: "held", waitMs: 0 });

    proxy.stall();
    const outcomes = await Promise.allSettled([
      store.acquire("llm", { slotId: "s1", waitMs: 0 }),
      store.acquire("llm", { slotId: "s2", waitMs: 30_000 }),
      store.release("llm", "held"),
      store.renew("llm", "held"),
    ]);
    // release answers "not released" under the closed policy only by throwing: all four fail.
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      if (outcome.status === "rejected") {
        expect(outcome.reason).toBeInstanceOf(StoreUnavailableError);
      }
    }

    await proxy.resume();
    await vi.waitFor(() => expect(store.health().state).toBe("ok"), { timeout: 3_000 });
    await store.whenIdle();
    // The release Redis did not get was sent again once it was back: nothing is held.
    const snapshot = await store.snapshot("llm");
    expect(snapshot?.slotIds).toEqual([]);
    expect(snapshot?.waiterIds).toEqual([]);
    const again = await Promise.all(
      ["t1", "t2", "t3", "t4"].map((slotId) => store.acquire("llm", { slotId, waitMs: 0 })),
    );
    expect(types(again)).toEqual(["granted", "granted", "granted", "rejected:concurrency"]);
  });
});
