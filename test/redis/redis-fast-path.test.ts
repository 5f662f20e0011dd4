import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { StorePoolConfig } from "../../src/store/types.js";
import { BASE_POOL } from "../store-conformance/store-fixture.js";
import { REDIS_URL, recordingStores, requireRedis } from "./redis-harness.js";

// The scripts skip work while it cannot change the answer: no reclaim scan while the pool's
// lower bound of lease deadlines (`due`) lies ahead, no queue read while no waiter can have
// run out (`minwait`), no grant counter (holders are ordered by the grant log's length plus
// what was trimmed off it). These tests pin the answers those shortcuts must not change.

const available = await requireRedis("the Redis fast-path tests");

const POOL: StorePoolConfig = { ...BASE_POOL, queueSize: 5 };

describe.skipIf(!available)("RedisSlotStore shortcuts", () => {
  const { prefix, open } = recordingStores("fast-path");

  it("keeps holders in grant order while the grant log is trimmed", async () => {
    const { store } = await open(new ManualClock());
    await store.upsertPool("llm", { ...POOL, maxConcurrent: 2 });
    // Two slots overlap at every step; the log (1024 kept) is trimmed along the way.
    await store.acquire("llm", { slotId: "s0", waitMs: 0 });
    for (let i = 1; i <= 1_400; i++) {
      await store.acquire("llm", { slotId: `s${i}`, waitMs: 0 });
      if (i > 1_000) {
        expect((await store.snapshot("llm"))?.slotIds).toEqual([`s${i - 1}`, `s${i}`]);
      }
      await store.release("llm", `s${i - 1}`);
    }
  }, 60_000);

  it("answers the renewed lease deadline when the slot is released", async () => {
    const clock = new ManualClock();
    const { store } = await open(clock);
    await store.upsertPool("llm", POOL);
    const start = clock.now();
    await store.acquire("llm", { slotId: "s1", waitMs: 0 });
    await clock.advance(4_000);
    expect(await store.renew("llm", "s1")).toEqual({
      type: "renewed",
      leaseDeadline: start + 14_000,
    });
    expect(await store.release("llm", "s1")).toEqual({
      released: true,
      slot: {
        slotId: "s1",
        acquiredAt: start,
        leaseDeadline: start + 14_000,
        requestDeadline: start + 60_000,
        heldAtGrant: 1,
      },
      held: 1,
      queued: 0,
      shared: { version: 0, learned: { concurrency: null, rpm: null, pausedUntil: 0 } },
    });
  });

  it("reclaims a dead process's lease on time after a release left an earlier wake-up", async () => {
    const clock = new ManualClock();
    const survivor = await open(clock);
    const dying = await open(clock);
    await survivor.store.upsertPool("llm", POOL);
    await dying.store.upsertPool("llm", POOL);
    const start = clock.now();
    await survivor.store.acquire("llm", { slotId: "a", waitMs: 0 }); // lease: start + 10 s
    await clock.advance(5_000);
    await survivor.store.release("llm", "a");
    await dying.store.acquire("llm", { slotId: "b", waitMs: 0 }); // lease: start + 15 s
    await dying.store.close();
    expect(await survivor.store.acquire("llm", { slotId: "w", waitMs: 60_000 })).toMatchObject({
      type: "queued",
    });

    // The wake-up at a's old deadline finds nothing to reclaim and moves on to b's.
    await clock.advance(9_999);
    await survivor.store.whenIdle();
    expect(survivor.grants).toEqual([]);
    await clock.advance(1);
    await survivor.store.whenIdle();
    expect(survivor.grants.map((slot) => [slot.slotId, slot.acquiredAt])).toEqual([
      ["w", start + 15_000],
    ]);
  });

  it("drops a waiter whose wait ran out although the pool is blocked", async () => {
    const clock = new ManualClock();
    const { store } = await open(clock);
    await store.upsertPool("llm", POOL);
    await store.acquire("llm", { slotId: "s1", waitMs: 0 });
    await store.acquire("llm", { slotId: "w1", waitMs: 1_000 });
    await store.acquire("llm", { slotId: "w2", waitMs: 30_000 });
    await clock.advance(1_001);
    expect(await store.acquire("llm", { slotId: "n1", waitMs: 0 })).toEqual({
      type: "rejected",
      reason: "concurrency",
      retryAfterMs: null,
      figures: { held: 1, queued: 1, limit: 1 },
    });
    expect((await store.snapshot("llm"))?.waiterIds).toEqual(["w2"]);
  });

  it("serves waiters again after the queue drained and filled up", async () => {
    const clock = new ManualClock();
    const { store, grants } = await open(clock);
    await store.upsertPool("llm", POOL);
    await store.acquire("llm", { slotId: "s1", waitMs: 0 });
    await store.acquire("llm", { slotId: "w1", waitMs: 1_000 });
    await store.release("llm", "s1"); // w1 gets it: the queue is empty
    await clock.advance(5_000);
    await store.acquire("llm", { slotId: "w2", waitMs: 500 });
    await clock.advance(501);
    // w2's wait ran out: a newcomer neither waits behind it nor is refused for it.
    expect(await store.acquire("llm", { slotId: "w3", waitMs: 10_000 })).toMatchObject({
      type: "queued",
      figures: { queued: 1 },
    });
    await store.release("llm", "w1");
    expect(grants.map((slot) => slot.slotId)).toEqual(["w1", "w3"]);
  });

  it("still reclaims and serves what a lost pool hash left behind", async () => {
    const clock = new ManualClock();
    const { store, grants } = await open(clock);
    await store.upsertPool("llm", POOL);
    const start = clock.now();
    await store.acquire("llm", { slotId: "s1", waitMs: 0 });
    await store.acquire("llm", { slotId: "w1", waitMs: 60_000 });
    const admin = new Redis(REDIS_URL);
    try {
      // Only the pool's hash goes (an eviction, a stray DEL): its holders and queue stay.
      expect(await admin.del(`${prefix}{p:llm}:pool:llm`)).toBe(1);
    } finally {
      admin.disconnect();
    }

    // The acquire defines the pool again; the leftover holder and waiter still count.
    expect(await store.acquire("llm", { slotId: "n1", waitMs: 0 })).toMatchObject({
      type: "rejected",
      reason: "concurrency",
      figures: { held: 1, queued: 1 },
    });
    await clock.advance(10_000);
    await store.whenIdle();
    expect(grants.map((slot) => [slot.slotId, slot.acquiredAt])).toEqual([["w1", start + 10_000]]);
  });

  it("counts holders exactly when a release also reclaims, and serves every waiter it can", async () => {
    const start = 1_700_000_000_000;
    const pool = { ...POOL, maxConcurrent: 2 };
    // Each process's clock moves only when told to; the releaser defines the pool before
    // any slot is held, so no wake-up timer of its own reclaims ahead of its release.
    const owner = await open(new ManualClock(start));
    const releaserClock = new ManualClock(start);
    const releaser = await open(releaserClock);
    await owner.store.upsertPool("llm", pool);
    await releaser.store.upsertPool("llm", pool);
    await owner.store.acquire("llm", { slotId: "s1", waitMs: 0 }); // lease: start + 10 s
    await owner.store.acquire("llm", { slotId: "s2", waitMs: 0 });
    await owner.store.acquire("llm", { slotId: "w1", waitMs: 60_000 });
    await owner.store.acquire("llm", { slotId: "w2", waitMs: 60_000 });
    const renewer = await open(new ManualClock(start + 9_500));
    await renewer.store.upsertPool("llm", pool);
    expect(await renewer.store.renew("llm", "s2")).toEqual({
      type: "renewed",
      leaseDeadline: start + 19_500,
    });

    // 0.5 s after s1's lease ran out, one script reclaims s1 (w1 gets it) and frees s2 (w2).
    await releaserClock.advance(10_500);
    expect(await releaser.store.release("llm", "s2")).toMatchObject({ released: true });
    await expect.poll(() => owner.grants.map((slot) => slot.slotId)).toEqual(["w1", "w2"]);
    expect((await releaser.store.snapshot("llm"))?.slotIds).toEqual(["w1", "w2"]);
  });
});
