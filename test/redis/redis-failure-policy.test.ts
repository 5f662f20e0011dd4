import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { statusForError } from "../../adapters/hono/error-status.js";
import type { RedisSlotStore, StoreHealth } from "../../adapters/redis/index.js";
import { createRedisSlotStore } from "../../adapters/redis/index.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { QueueTimeoutError, StoreUnavailableError } from "../../src/errors.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import type { StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { deleteKeys, REDIS_URL, requireRedis, uniquePrefix } from "./redis-harness.js";
import { closedPort, TcpProxy } from "./tcp-proxy.js";

const available = await requireRedis("the Redis failure-policy tests");

const POOL: StorePoolConfig = { ...BASE_POOL, queueSize: 5 };
const FAST_PROBES = { min: 20, max: 100 };

/** Outages are real: the store talks to Redis through a TCP proxy the test cuts and restores. */
describe.skipIf(!available)("RedisSlotStore when Redis is unreachable", () => {
  const prefix = uniquePrefix("failure");
  const stores: RedisSlotStore[] = [];
  const proxies: TcpProxy[] = [];

  function track(store: RedisSlotStore): RedisSlotStore {
    store.ready().catch(() => {});
    stores.push(store);
    return store;
  }

  async function proxied(options: Parameters<typeof createRedisSlotStore>[0]) {
    const proxy = await TcpProxy.start(new URL(REDIS_URL));
    proxies.push(proxy);
    const clock = new ManualClock();
    const statuses: StoreHealth["state"][] = [];
    const store = track(
      createRedisSlotStore({
        url: proxy.url,
        prefix,
        clock,
        recoveryProbeMs: FAST_PROBES,
        commandTimeoutMs: 300,
        ...options,
      }),
    );
    store.onStatus((status) => statuses.push(status.state));
    await store.ready();
    return { proxy, clock, store, statuses };
  }

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const proxy of proxies.splice(0)) await proxy.stop();
    await deleteKeys(prefix);
  });
  afterAll(() => deleteKeys(prefix));

  describe('failurePolicy "closed"', () => {
    it("throws StoreUnavailableError promptly when nothing listens", async () => {
      const port = await closedPort();
      const store = track(
        createRedisSlotStore({ url: `redis://127.0.0.1:${port}`, prefix, commandTimeoutMs: 2_000 }),
      );
      const started = performance.now();
      await expect(store.upsertPool("llm", POOL)).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(store.health().state).toBe("unavailable");

      // Known down: later calls fail at once, without waiting for the network, and say why once.
      const again = performance.now();
      const refused = store.acquire("llm", { slotId: "s1", waitMs: 0 });
      await expect(refused).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(performance.now() - again).toBeLessThan(50);
      await expect(refused).rejects.toThrow(/^Redis is unavailable: connection to Redis lost$/);
    });

    it("fails within the command timeout when Redis stalls, and recovers by itself", async () => {
      const { proxy, store, statuses } = await proxied({ failurePolicy: "closed" });
      await store.upsertPool("llm", POOL);

      proxy.stall();
      const started = performance.now();
      await expect(store.acquire("llm", { slotId: "s1", waitMs: 0 })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(250);
      expect(waited).toBeLessThan(1_000);
      // Known down: the next call says why once, not "Redis is unavailable: Redis is …".
      await expect(store.acquire("llm", { slotId: "s0", waitMs: 0 })).rejects.toThrow(
        /^Redis is unavailable: Command timed out/,
      );

      await proxy.resume();
      await vi.waitFor(() => expect(store.health().state).toBe("ok"), { timeout: 3_000 });
      expect(statuses).toEqual(["unavailable", "ok"]);
      expect(await store.acquire("llm", { slotId: "s2", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
    });
    it("cancels an acquire that timed out but ran in Redis, so its slot is not held a term", async () => {
      const { proxy, store } = await proxied({ failurePolicy: "closed" });
      await store.upsertPool("llm", POOL);
      // Redis grants s1, but the answer never arrives: the caller gets an error.
      proxy.loseAnswers();
      await expect(store.acquire("llm", { slotId: "s1", waitMs: 0 })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      await proxy.resume();
      await vi.waitFor(() => expect(store.health().state).toBe("ok"), { timeout: 3_000 });
      await store.whenIdle();
      expect(await store.acquire("llm", { slotId: "s2", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
    });

    it("ends a wait that runs out while Redis is away with QueueTimeoutError (504 over HTTP), not the store's error", async () => {
      const proxy = await TcpProxy.start(new URL(REDIS_URL));
      proxies.push(proxy);
      const store = track(
        createRedisSlotStore({
          url: proxy.url,
          prefix,
          recoveryProbeMs: FAST_PROBES,
          commandTimeoutMs: 300,
        }),
      );
      await store.ready();
      // Real time: the wait's timer is the governor's, the lease clock Redis's.
      const governor = createGovernor({ store });
      try {
        await governor.definePool("waits", {
          maxConcurrent: 1,
          queue: { size: 1, timeoutMs: 5_000 },
        });
        await governor.acquire("waits");
        const waiting = governor.acquire("waits", { waitMs: 500 });
        await vi.waitFor(async () =>
          expect((await store.snapshot("waits"))?.waiterIds).toHaveLength(1),
        );
        await proxy.stop();
        const error = await waiting.catch((reason: unknown) => reason);
        expect(error).toBeInstanceOf(QueueTimeoutError);
        expect(error).toMatchObject({ code: "queue_timeout", waitedMs: 500 });
        expect((error as Error).cause).toBeInstanceOf(StoreUnavailableError);
        expect(statusForError(error)).toBe(504);
        expect(governor.metrics.totals("waits", 0, Date.now() + 60_000).timedOut).toBe(1);
      } finally {
        await governor.close();
      }
    });
  });

  describe('failurePolicy "open"', () => {
    it("sends a release Redis did not get once it is back, instead of holding the slot a term", async () => {
      const { proxy, store } = await proxied({ failurePolicy: "open" });
      await store.upsertPool("llm", POOL);
      await store.acquire("llm", { slotId: "r1", waitMs: 0 });
      await proxy.stop();
      await vi.waitFor(() => expect(store.health().state).toBe("degraded"));
      expect(await store.release("llm", "r1")).toEqual({ released: false });
      // Redis kept its data (a network outage): r1 is still held there until the release lands.
      await proxy.resume();
      await vi.waitFor(() => expect(store.health().state).toBe("ok"), { timeout: 3_000 });
      await store.whenIdle();
      expect(await store.snapshot("llm")).toMatchObject({ held: 0, slotIds: [] });
      expect(await store.acquire("llm", { slotId: "r2", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
    });

    it("counts the Redis slots still at work against the local limit until Redis is back", async () => {
      const { proxy, clock, store } = await proxied({ failurePolicy: "open" });
      await store.upsertPool("llm", { ...POOL, maxConcurrent: 2 });
      await store.acquire("llm", { slotId: "r1", waitMs: 0 });
      await store.acquire("llm", { slotId: "r2", waitMs: 0 });
      await proxy.stop();
      expect(await store.acquire("llm", { slotId: "l1", waitMs: 0 })).toMatchObject({
        type: "rejected",
        reason: "concurrency",
      });
      // Renewed along with r1 and r2 (retried against Redis), the places outlive one term.
      for (let elapsed = 0; elapsed < 2 * POOL.termMs; elapsed += POOL.termMs / 2) {
        await clock.advance(POOL.termMs / 2);
        for (const slotId of ["r1", "r2"]) {
          await expect(store.renew("llm", slotId)).rejects.toBeInstanceOf(StoreUnavailableError);
        }
      }
      expect(await store.acquire("llm", { slotId: "l1", waitMs: 0 })).toMatchObject({
        type: "rejected",
      });

      // Back: Redis decides about r1 and r2 (their leases ran out there, unrenewed), and the
      // local places are given up, so a second outage starts with the whole local limit.
      await proxy.resume();
      await vi.waitFor(() => expect(store.health().state).toBe("ok"), { timeout: 3_000 });
      await store.whenIdle();
      expect((await store.snapshot("llm"))?.slotIds).toEqual([]);
      await proxy.stop();
      for (const slotId of ["l2", "l3"]) {
        expect(await store.acquire("llm", { slotId, waitMs: 0 })).toMatchObject({
          type: "granted",
        });
      }
    });

    it("cancels in Redis an acquire that timed out there and was served locally instead", async () => {
      const { proxy, store } = await proxied({ failurePolicy: "open" });
      await store.upsertPool("llm", POOL);
      proxy.loseAnswers();
      // Redis grants s1 unheard; the local fallback grants it too, and its caller finishes.
      expect(await store.acquire("llm", { slotId: "s1", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
      expect(store.health().state).toBe("degraded");
      await store.release("llm", "s1");
      await proxy.resume();
      await vi.waitFor(() => expect(store.health().state).toBe("ok"), { timeout: 3_000 });
      await store.whenIdle();
      expect(await store.snapshot("llm")).toMatchObject({ slotIds: [] });
      expect(await store.acquire("llm", { slotId: "s2", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
    });

    it("serves its waiters queued in Redis from the local queue, ahead of newcomers", async () => {
      const { proxy, store } = await proxied({ failurePolicy: "open" });
      await store.upsertPool("llm", POOL);
      const handed: string[] = [];
      store.setListener({ granted: (_pool, slot) => handed.push(slot.slotId), reclaimed() {} });
      await store.acquire("llm", { slotId: "r1", waitMs: 0 });
      for (const slotId of ["w1", "w2"]) {
        expect(await store.acquire("llm", { slotId, waitMs: 60_000 })).toMatchObject({
          type: "queued",
        });
      }

      await proxy.stop();
      await vi.waitFor(() => expect(store.health().state).toBe("degraded"));
      // Redis cannot hand w1 and w2 their turns now: they wait in the local queue instead,
      // where a newcomer does not overtake them.
      expect(await store.acquire("llm", { slotId: "n1", waitMs: 60_000 })).toMatchObject({
        type: "queued",
        figures: { queued: 3 },
      });
      expect(await store.release("llm", "r1")).toEqual({ released: false });
      expect(handed).toEqual(["w1"]);
      expect(await store.release("llm", "w1")).toMatchObject({ released: true });
      expect(handed).toEqual(["w1", "w2"]);

      // Redis is back with its data: r1's release reaches it, w1 (done) and w2 (in use) are
      // no longer queued there, w2 is a holder, and n1 waits behind it.
      await proxy.resume();
      await vi.waitFor(() => expect(store.health().state).toBe("ok"), { timeout: 3_000 });
      await store.whenIdle();
      expect(await store.snapshot("llm")).toMatchObject({ slotIds: ["w2"], waiterIds: ["n1"] });
      expect((await store.release("llm", "w2")).released).toBe(true);
      await vi.waitFor(() => expect(handed).toEqual(["w1", "w2", "n1"]));
      expect(await store.snapshot("llm")).toMatchObject({ slotIds: ["n1"], waiterIds: [] });
    });

    it("admits locally during an outage, then returns to Redis, which takes the local slots over", async () => {
      const { proxy, clock, store, statuses } = await proxied({ failurePolicy: "open" });
      await store.upsertBudget("team", 5);
      await store.upsertPool("llm", { ...POOL, budget: { id: "team", reservedConcurrent: 0 } });
      expect(await store.acquire("llm", { slotId: "r1", waitMs: 0 })).toMatchObject({
        type: "granted",
      });

      await proxy.stop();
      // This process now counts alone, and r1's caller still works: its limit of 1 is taken.
      expect(await store.acquire("llm", { slotId: "l0", waitMs: 0 })).toMatchObject({
        type: "rejected",
        reason: "concurrency",
      });
      expect(store.health().state).toBe("degraded");
      // A Redis slot cannot be confirmed renewed or released: its renewal is retried later,
      // never "lost"; its release frees its local place.
      await expect(store.renew("llm", "r1")).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await store.release("llm", "r1")).toEqual({ released: false });
      expect(await store.acquire("llm", { slotId: "l1", waitMs: 0 })).toMatchObject({
        type: "granted",
      });
      expect(await store.acquire("llm", { slotId: "l2", waitMs: 0 })).toMatchObject({
        type: "rejected",
        reason: "concurrency",
      });
      expect(await store.acquire("llm", { slotId: "l3", waitMs: 5_000 })).toMatchObject({
        type: "queued",
      });
      expect(store.stats().localOperations).toBeGreaterThanOrEqual(3);

      // Redis comes back empty (restarted without persistence): definitions are pushed again.
      await deleteKeys(prefix);
      await proxy.resume();
      await vi.waitFor(() => expect(store.health().state).toBe("ok"), { timeout: 3_000 });
      expect(statuses).toEqual(["degraded", "ok"]);

      // The slot granted locally (l1) is a holder in Redis now, and its waiter (l3) waits in
      // the Redis queue: the limit of 1 holds across the outage's end.
      expect(await store.snapshot("llm")).toMatchObject({ slotIds: ["l1"], waiterIds: ["l3"] });
      expect(await store.acquire("llm", { slotId: "r2", waitMs: 0 })).toMatchObject({
        type: "rejected",
      });
      // The re-created pool admits nobody new until every process could hand its slots back.
      await clock.advance(3_000);
      const handed: string[] = [];
      store.setListener({ granted: (_pool, slot) => handed.push(slot.slotId), reclaimed() {} });
      expect((await store.release("llm", "l1")).released).toBe(true);
      await vi.waitFor(() => expect(handed).toEqual(["l3"]));
      expect(await store.renew("llm", "l3")).toMatchObject({ type: "renewed" });
      expect((await store.release("llm", "l3")).released).toBe(true);
      expect(await store.acquire("llm", { slotId: "r3", waitMs: 0 })).toMatchObject({
        type: "granted",
        figures: { held: 1 },
      });
      expect((await store.snapshot("llm"))?.slotIds).toEqual(["r3"]);
    });
  });
});
