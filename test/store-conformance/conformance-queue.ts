import { describe, expect, it } from "vitest";
import type { StoreFixture } from "./store-fixture.js";
import { NOTHING_SHARED } from "./store-fixture.js";

/** Queueing, FIFO handoff, no overtaking, queue_full, wait deadlines and cancel. */
export function describeQueueRules(fixture: () => StoreFixture): void {
  describe("queue and handoff", () => {
    it("queues a waiter when waitMs > 0 and the queue has room", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1, queueSize: 3 });
      await t.grant("p", "s1");
      const result = await t.acquire("p", "w1", 5_000);
      expect(result).toEqual({ type: "queued", figures: { held: 1, queued: 1, limit: 1 } });
      const snapshot = await t.snapshot("p");
      expect(snapshot.waiterIds).toEqual(["w1"]);
      expect(snapshot.queued).toBe(1);
      expect(t.events.grants).toEqual([]);
    });

    it("hands each released slot to the head waiter, in FIFO order, with queuedMs", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1, termMs: 10_000, requestTimeoutMs: 60_000 });
      const held = await t.grant("p", "s1");
      const start = t.now();
      await t.enqueue("p", "w1");
      await t.advance(100);
      await t.enqueue("p", "w2");
      await t.advance(100);
      await t.enqueue("p", "w3");
      await t.advance(300);

      const released = await t.store.release("p", "s1");
      expect({ ...released, releasedAt: undefined }).toEqual({
        released: true,
        slot: held,
        held: 1,
        queued: 3,
        shared: NOTHING_SHARED,
      });
      // A store that reports its clock at the release reports it exactly.
      if (released.releasedAt !== undefined) expect(released.releasedAt).toBe(t.now());
      const handoffAt = start + 500;
      expect(t.events.grants).toEqual([
        {
          pool: "p",
          slot: {
            slotId: "w1",
            acquiredAt: handoffAt,
            leaseDeadline: handoffAt + 10_000,
            requestDeadline: handoffAt + 60_000,
            heldAtGrant: 1,
          },
          queuedMs: 500,
        },
      ]);
      const snapshot = await t.snapshot("p");
      expect(snapshot.slotIds).toEqual(["w1"]);
      expect(snapshot.waiterIds).toEqual(["w2", "w3"]);

      await t.advance(50);
      await t.release("p", "w1");
      await t.release("p", "w2");
      expect(t.events.grants.map((g) => [g.slot.slotId, g.queuedMs])).toEqual([
        ["w1", 500],
        ["w2", 450],
        ["w3", 350],
      ]);
      expect((await t.snapshot("p")).waiterIds).toEqual([]);
    });

    it("never lets a newcomer overtake a waiter, even when the newcomer could pass", async () => {
      const t = fixture();
      // The head waits for the RPM window while slots are free: the one state where a
      // newcomer could be admitted if the store did not check the queue first.
      await t.definePool("p", { maxConcurrent: 5, queueSize: 5, rpm: 1 });
      await t.grant("p", "s1");
      await t.release("p", "s1");
      await t.enqueue("p", "w1", 60_000);

      // Behind the waiter, fail-fast names the gate that holds everyone back.
      const failFast = await t.acquire("p", "n1", 0);
      expect(failFast).toMatchObject({
        type: "rejected",
        reason: "rpm",
        retryAfterMs: 60_000,
      });
      await t.enqueue("p", "n2", 60_000);
      expect((await t.snapshot("p")).waiterIds).toEqual(["w1", "n2"]);

      await t.advance(59_999);
      expect(t.events.grants).toEqual([]);
      await t.advance(1);
      expect(t.events.grantedIds()).toEqual(["w1"]);
    });

    it("rejects with queue_full when the queue holds queueSize waiters", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1, queueSize: 2 });
      await t.grant("p", "s1");
      await t.enqueue("p", "w1");
      await t.enqueue("p", "w2");
      expect(await t.acquire("p", "w3", 5_000)).toEqual({
        type: "rejected",
        reason: "queue_full",
        retryAfterMs: null,
        figures: { held: 1, queued: 2, limit: 1 },
      });
      // Fail-fast behind waiters is a plain concurrency rejection.
      expect(await t.acquire("p", "w4", 0)).toMatchObject({
        type: "rejected",
        reason: "concurrency",
      });
      expect((await t.snapshot("p")).waiterIds).toEqual(["w1", "w2"]);
    });

    it("answers queue_full with no estimate, also behind a head waiting for a time gate", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 5, queueSize: 1, rpm: 1 });
      await t.grant("p", "s1");
      await t.enqueue("p", "w1", 60_000);
      expect(await t.acquire("p", "w2", 60_000)).toMatchObject({
        type: "rejected",
        reason: "queue_full",
        retryAfterMs: null,
      });
    });

    it("drops a waiter whose wait deadline has passed instead of granting it", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1 });
      await t.grant("p", "s1");
      await t.enqueue("p", "w1", 1_000);
      await t.enqueue("p", "w2", 60_000);
      await t.advance(1_001);
      await t.release("p", "s1");
      expect(t.events.grantedIds()).toEqual(["w2"]);
      expect((await t.snapshot("p")).waiterIds).toEqual([]);
      expect(await t.store.cancel("p", "w1")).toEqual({ type: "unknown" });
    });

    it("still grants a waiter exactly at its wait deadline", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1 });
      await t.grant("p", "s1");
      await t.enqueue("p", "w1", 1_000);
      await t.advance(1_000);
      await t.release("p", "s1");
      expect(t.events.grants).toMatchObject([
        { pool: "p", slot: { slotId: "w1" }, queuedMs: 1_000 },
      ]);
    });
  });

  describe("cancel", () => {
    it("removes a waiter, which is then never granted", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1 });
      await t.grant("p", "s1");
      await t.enqueue("p", "w1");
      await t.enqueue("p", "w2");
      expect(await t.store.cancel("p", "w1")).toEqual({ type: "cancelled" });
      expect((await t.snapshot("p")).waiterIds).toEqual(["w2"]);
      await t.release("p", "s1");
      expect(t.events.grantedIds()).toEqual(["w2"]);
      expect(await t.store.cancel("p", "w1")).toEqual({ type: "unknown" });
    });

    it("answers granted with the slot when the handoff won the race, and the slot stays held", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1 });
      await t.grant("p", "s1");
      await t.enqueue("p", "w1");
      await t.release("p", "s1");
      const handed = t.events.grants[0]?.slot;
      expect(handed?.slotId).toBe("w1");
      expect(await t.store.cancel("p", "w1")).toEqual({ type: "granted", slot: handed });
      expect((await t.snapshot("p")).slotIds).toEqual(["w1"]);
    });

    it("answers unknown for ids that are neither waiting nor held", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1 });
      expect(await t.store.cancel("p", "never")).toEqual({ type: "unknown" });
      await t.grant("p", "s1");
      await t.release("p", "s1");
      expect(await t.store.cancel("p", "s1")).toEqual({ type: "unknown" });
      expect(await t.store.cancel("nowhere", "s1")).toEqual({ type: "unknown" });
    });
  });
}
