import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { FailurePolicy, RedisSlotStore } from "../../adapters/redis/index.js";
import { createRedisSlotStore } from "../../adapters/redis/index.js";
import { loadServerConfig } from "../../adapters/server/config.js";
import { slotStoreFor } from "../../adapters/server/slot-store.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { HeldSlot, StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { deleteKeys, REDIS_URL, requireRedis, uniquePrefix } from "./redis-harness.js";
import { TcpProxy } from "./tcp-proxy.js";

// Redis restarts without persistence (as `.ci/run` starts it): every connection drops and the
// server comes back empty. Each process reaches Redis through its own TCP proxy, which the
// test cuts and restores, deleting the suite's keys meanwhile. Slots still in use and callers
// still waiting must come back, and the limit must hold: nobody is admitted on top of a slot
// Redis forgot, whichever process reconnects first.

const available = await requireRedis("the Redis restart tests");

const POOL: StorePoolConfig = { ...BASE_POOL, maxConcurrent: 1, queueSize: 10 };
const RESTORE_GRACE_MS = 500;

/** One process: its store, its proxy to Redis, and the handoffs it was told of. */
interface Process {
  store: RedisSlotStore;
  proxy: TcpProxy;
  grants: HeldSlot[];
}

describe.skipIf(!available)("a Redis that restarts without its data", () => {
  const prefix = uniquePrefix("restart");
  const opened: Process[] = [];

  afterEach(async () => {
    for (const { store, proxy } of opened.splice(0)) {
      await store.close();
      await proxy.stop();
    }
    await deleteKeys(prefix);
  });
  afterAll(() => deleteKeys(prefix));

  /** Two processes on one Redis sharing one clock; `handedOver` lists both's handoffs in order. */
  async function twoProcesses(failurePolicy: FailurePolicy) {
    const clock = new ManualClock();
    const handedOver: string[] = [];
    const open = async (): Promise<Process> => {
      const proxy = await TcpProxy.start(new URL(REDIS_URL));
      const store = createRedisSlotStore({
        url: proxy.url,
        prefix,
        clock,
        failurePolicy,
        recoveryProbeMs: { min: 20, max: 100 },
        commandTimeoutMs: 300,
        restoreGraceMs: RESTORE_GRACE_MS,
      });
      const process = { store, proxy, grants: [] as HeldSlot[] };
      opened.push(process);
      await store.ready();
      await store.upsertPool("llm", POOL);
      store.setListener({
        granted: (_pool, slot) => {
          process.grants.push(slot);
          handedOver.push(slot.slotId);
        },
        reclaimed() {},
      });
      return process;
    };
    return { clock, handedOver, a: await open(), b: await open() };
  }

  /** Redis goes away for every process (`during` runs then) and loses the suite's keys. */
  async function goAwayEmpty(
    processes: Process[],
    during: () => Promise<unknown> = async () => {},
  ): Promise<void> {
    for (const { proxy } of processes) await proxy.stop();
    for (const { store } of processes) {
      await vi.waitFor(() => expect(store.health().state).not.toBe("ok"));
    }
    await during();
    await deleteKeys(prefix);
  }

  /** Redis is reachable again for `process`, which recovers. */
  async function comeBack({ proxy, store }: Process): Promise<void> {
    await proxy.resume();
    await vi.waitFor(() => expect(store.health().state).toBe("ok"), { timeout: 5_000 });
    await store.whenIdle();
  }

  it('"closed": slots in use are held again before any waiter is served, whoever reconnects first', async () => {
    const { clock, handedOver, a, b } = await twoProcesses("closed");
    expect(await a.store.acquire("llm", { slotId: "a1", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    await b.store.acquire("llm", { slotId: "b1", waitMs: 30_000 });
    await clock.advance(10);
    await a.store.acquire("llm", { slotId: "a2", waitMs: 30_000 });
    await clock.advance(10);
    await b.store.acquire("llm", { slotId: "b2", waitMs: 30_000 });

    await goAwayEmpty([a, b]);
    // The waiting process is back first: its waiters queue again, but the re-created pool
    // admits nobody yet, as a1 (still in use) has not been handed back.
    await comeBack(b);
    expect(await b.store.snapshot("llm")).toMatchObject({ slotIds: [], waiterIds: ["b1", "b2"] });
    expect(await b.store.acquire("llm", { slotId: "late", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "paused",
    });
    // A learner's update does not lift the pause, which is no learned limit either.
    await b.store.setLearned("llm", { concurrency: null, rpm: null, pausedUntil: 0 });
    await b.store.whenIdle();
    expect(handedOver).toEqual([]);
    expect((await b.store.snapshot("llm"))?.learned.pausedUntil).toBe(0);
    await comeBack(a);
    expect(await a.store.snapshot("llm")).toMatchObject({
      slotIds: ["a1"],
      waiterIds: ["b1", "b2", "a2"],
    });
    await clock.advance(RESTORE_GRACE_MS);
    await a.store.whenIdle();
    await b.store.whenIdle();
    // The forgotten slot still counts once the pause is over: nobody gets in on top of it.
    expect(handedOver).toEqual([]);
    expect(await b.store.acquire("llm", { slotId: "late", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "concurrency",
    });

    // Its caller renews and releases it as usual; the waiters get their turns in order.
    expect(await a.store.renew("llm", "a1")).toMatchObject({ type: "renewed" });
    expect(await a.store.release("llm", "a1")).toMatchObject({ released: true });
    for (const [turn, owner] of [
      ["b1", b],
      ["b2", b],
      ["a2", a],
    ] as const) {
      await vi.waitFor(() => expect(handedOver.at(-1)).toBe(turn));
      expect(await owner.store.release("llm", turn)).toMatchObject({ released: true });
    }
    expect(handedOver).toEqual(["b1", "b2", "a2"]);
  });

  it('"closed": a slot whose lease ran out during the outage stays lost', async () => {
    const { clock, a, b } = await twoProcesses("closed");
    await a.store.acquire("llm", { slotId: "a1", waitMs: 0 });
    await goAwayEmpty([a, b], () => clock.advance(POOL.termMs + 1));
    await comeBack(a);
    await comeBack(b);
    await clock.advance(RESTORE_GRACE_MS);
    expect(await a.store.renew("llm", "a1")).toEqual({ type: "not_found" });
    expect(await b.store.acquire("llm", { slotId: "b1", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
  });

  it('"open": slots from before and during the outage count before any waiter is served', async () => {
    const { clock, handedOver, a, b } = await twoProcesses("open");
    await b.store.acquire("llm", { slotId: "b1", waitMs: 0 });
    expect(await a.store.acquire("llm", { slotId: "a1", waitMs: 30_000 })).toMatchObject({
      type: "queued",
    });
    await goAwayEmpty([a, b], async () => {
      // Alone, each process admits up to its own limit: a's waiter moves to its local queue
      // and takes a's slot, ahead of a newcomer.
      expect(handedOver).toEqual(["a1"]);
      expect(await a.store.acquire("llm", { slotId: "a2", waitMs: 0 })).toMatchObject({
        type: "rejected",
        reason: "concurrency",
      });
    });
    await comeBack(a);
    await comeBack(b);
    await clock.advance(RESTORE_GRACE_MS);
    await a.store.whenIdle();

    // Both slots count in Redis, the one from before the outage and the one taken during it.
    expect(await a.store.snapshot("llm")).toMatchObject({ waiterIds: [] });
    expect((await a.store.snapshot("llm"))?.slotIds.sort()).toEqual(["a1", "b1"]);
    await b.store.release("llm", "b1");
    // One slot still in use (a1): the limit of 1 is reached.
    expect(await b.store.acquire("llm", { slotId: "b2", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "concurrency",
    });
    await a.store.release("llm", "a1");
    expect(await b.store.acquire("llm", { slotId: "b2", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
    expect(handedOver).toEqual(["a1"]);
  });

  it("a slot nobody renews keeps its own lease through a restart, it does not get a new one", async () => {
    const { clock, a, b } = await twoProcesses("closed");
    await a.store.acquire("llm", { slotId: "abandoned", waitMs: 0 });
    await clock.advance(POOL.termMs - 100);
    await goAwayEmpty([a, b]);
    await comeBack(a);
    await comeBack(b);
    expect((await a.store.snapshot("llm"))?.slotIds).toEqual(["abandoned"]);
    // Its lease ends where it always did: the pool is free once it has (and the pause is over).
    await clock.advance(RESTORE_GRACE_MS);
    await a.store.whenIdle();
    expect((await a.store.snapshot("llm"))?.slotIds).toEqual([]);
    expect(await b.store.acquire("llm", { slotId: "b1", waitMs: 0 })).toMatchObject({
      type: "granted",
    });
  });

  it("a waiter given up on during the outage is not served once Redis is back", async () => {
    const { handedOver, a, b } = await twoProcesses("closed");
    await a.store.acquire("llm", { slotId: "a1", waitMs: 0 });
    await b.store.acquire("llm", { slotId: "b1", waitMs: 30_000 });
    for (const { proxy } of [a, b]) await proxy.stop();
    await vi.waitFor(() => expect(b.store.health().state).not.toBe("ok"));
    // Its caller left; the cancel and then a1's release cannot reach Redis (kept its data).
    await expect(b.store.cancel("llm", "b1")).rejects.toThrow();
    await vi.waitFor(() => expect(a.store.health().state).not.toBe("ok"));
    await expect(a.store.release("llm", "a1")).rejects.toThrow();
    await comeBack(b);
    await comeBack(a);
    await a.store.whenIdle();
    await b.store.whenIdle();
    expect(handedOver).toEqual([]);
    expect(await a.store.snapshot("llm")).toMatchObject({ slotIds: [], waiterIds: [] });
  });

  it("learned limits come back with a pool Redis lost", async () => {
    const { a, b } = await twoProcesses("closed");
    const learned = { concurrency: 1, rpm: 30, pausedUntil: 0 };
    await a.store.setLearned("llm", learned);
    await goAwayEmpty([a, b]);
    await comeBack(a);
    await comeBack(b);
    expect((await b.store.snapshot("llm"))?.learned).toEqual(learned);
  });

  it("sluice serve passes --redis-restore-grace-ms to its store", async () => {
    const proxy = await TcpProxy.start(new URL(REDIS_URL));
    const config = loadServerConfig({
      flags: { redisUrl: proxy.url, redisPrefix: prefix, redisRestoreGraceMs: "1234" },
    });
    const store = (await slotStoreFor(config, () => {})) as RedisSlotStore;
    opened.push({ store, proxy, grants: [] });
    await store.upsertPool("llm", POOL);
    await goAwayEmpty([{ store, proxy, grants: [] }]);
    await comeBack({ store, proxy, grants: [] });
    const refused = await store.acquire("llm", { slotId: "s1", waitMs: 0 });
    expect(refused).toMatchObject({ type: "rejected", reason: "paused" });
    const retryAfterMs = refused.type === "rejected" ? (refused.retryAfterMs ?? 0) : 0;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(1234);
  });
});
