import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import type { StoreConnections } from "../../adapters/redis/connection.js";
import type { RedisSlotStore } from "../../adapters/redis/redis-slot-store.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { REDIS_URL, recordingStores, requireRedis } from "./redis-harness.js";

// While a process's event subscription is gone (a network blip on that connection), other
// processes skip its waiters and drop them from the queue, as they do a dead process's. Once
// the subscription is back, those waiters rejoin the queue instead of waiting out their whole
// wait for a handoff that will never come.

const available = await requireRedis("the Redis subscriber-reconnect tests");

const POOL: StorePoolConfig = BASE_POOL;

describe.skipIf(!available)("a process whose event subscription drops and comes back", () => {
  const stores = recordingStores("rejoin");
  const observer = new Redis(REDIS_URL);
  afterAll(() => observer.disconnect());

  async function open(clock: ManualClock) {
    const opened = await stores.open(clock);
    await opened.store.upsertPool("llm", POOL);
    return opened;
  }

  /** The store's event connection: closed by hand (no automatic reconnect), then reopened. */
  function subscriberOf(store: RedisSlotStore) {
    return (store as unknown as { connections: StoreConnections }).connections.subscriber;
  }

  /** How many processes of this suite listen to events, as Redis sees it. */
  async function listeners(): Promise<number> {
    const channels = (await observer.call("PUBSUB", "SHARDCHANNELS", `${stores.prefix}*`)) as [];
    return channels.length;
  }

  it("a waiter dropped meanwhile rejoins and is handed the slot a release freed", async () => {
    const clock = new ManualClock();
    const holder = await open(clock);
    const waiting = await open(clock);
    await holder.store.acquire("llm", { slotId: "h1", waitMs: 0 });
    await waiting.store.acquire("llm", { slotId: "w1", waitMs: 30_000 });
    await waiting.store.acquire("llm", { slotId: "w2", waitMs: 30_000 });
    expect(await listeners()).toBe(2);

    const subscriber = subscriberOf(waiting.store);
    subscriber.disconnect();
    await expect.poll(listeners).toBe(1);
    // The release finds nobody listening for w1 and w2: it drops them and keeps the slot free.
    await holder.store.release("llm", "h1");
    expect((await holder.store.snapshot("llm"))?.waiterIds).toEqual([]);
    expect(waiting.grants).toEqual([]);

    await clock.advance(1_000);
    await subscriber.connect();
    await expect.poll(() => waiting.grants.map((slot) => slot.slotId)).toEqual(["w1"]);
    await waiting.store.whenIdle();
    const snapshot = await holder.store.snapshot("llm");
    expect(snapshot?.slotIds).toEqual(["w1"]);
    // w2 is back in the queue behind it, with what is left of its wait.
    expect(snapshot?.waiterIds).toEqual(["w2"]);
    await waiting.store.release("llm", "w1");
    await expect.poll(() => waiting.grants.map((slot) => slot.slotId)).toEqual(["w1", "w2"]);
  });

  it("a waiter nobody dropped keeps its place, and is handed its slot once", async () => {
    const clock = new ManualClock();
    const holder = await open(clock);
    const waiting = await open(clock);
    await holder.store.acquire("llm", { slotId: "h1", waitMs: 0 });
    await waiting.store.acquire("llm", { slotId: "w1", waitMs: 30_000 });
    await holder.store.acquire("llm", { slotId: "h2", waitMs: 30_000 });

    const subscriber = subscriberOf(waiting.store);
    subscriber.disconnect();
    await expect.poll(listeners).toBe(1);
    await subscriber.connect();
    await expect.poll(listeners).toBe(2);
    await waiting.store.whenIdle();
    expect((await holder.store.snapshot("llm"))?.waiterIds).toEqual(["w1", "h2"]);

    await holder.store.release("llm", "h1");
    await expect.poll(() => waiting.grants.map((slot) => slot.slotId)).toEqual(["w1"]);
    expect(holder.grants).toEqual([]);
  });

  it("a waiter cancelled before the subscription came back does not rejoin", async () => {
    const clock = new ManualClock();
    const holder = await open(clock);
    const waiting = await open(clock);
    await holder.store.acquire("llm", { slotId: "h1", waitMs: 0 });
    await waiting.store.acquire("llm", { slotId: "w1", waitMs: 30_000 });

    const subscriber = subscriberOf(waiting.store);
    subscriber.disconnect();
    await expect.poll(listeners).toBe(1);
    await holder.store.release("llm", "h1");
    // The governor gives up on w1 (its wait ran out, its caller left): a cancel, answered "unknown".
    expect(await waiting.store.cancel("llm", "w1")).toMatchObject({ type: "unknown" });
    await subscriber.connect();
    await expect.poll(listeners).toBe(2);
    await waiting.store.whenIdle();
    const snapshot = await holder.store.snapshot("llm");
    expect(snapshot?.waiterIds).toEqual([]);
    expect(snapshot?.slotIds).toEqual([]);
    expect(waiting.grants).toEqual([]);
  });
});
