import { describe, expect, it } from "vitest";
import type { StoreFixture } from "./store-fixture.js";
import { NOTHING_SHARED } from "./store-fixture.js";

/** Learned concurrency, pool updates and removal. */
export function describeLimitRules(fixture: () => StoreFixture): void {
  describe("learned limits shared through the store", () => {
    it("hands back what setLearned wrote, probe backoff included, with a version that moves on", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 8 });
      await t.grant("p", "s1");
      await t.grant("p", "s2");
      expect((await t.store.inspect("p", "s1"))?.shared).toEqual(NOTHING_SHARED);

      const probe = { level: 6, failures: 3, failedAt: t.now() - 500 };
      await t.setLearned("p", { concurrency: 5, rpm: 120, pausedUntil: 0, probe });
      const learned = { concurrency: 5, rpm: 120, pausedUntil: 0, probe };
      expect((await t.store.inspect("p", "s1"))?.shared).toEqual({ version: 1, learned });
      expect((await t.snapshot("p")).learned).toEqual(learned);
      expect((await t.store.release("p", "s1")).shared).toEqual({ version: 1, learned });

      // A probe that held: the backoff is gone, for every reader.
      await t.setLearned("p", { concurrency: 6 });
      const cleared = { concurrency: 6, rpm: null, pausedUntil: 0 };
      expect((await t.store.release("p", "s2")).shared).toEqual({ version: 2, learned: cleared });
      expect((await t.snapshot("p")).learned).toEqual(cleared);
    });
  });

  describe("learned concurrency", () => {
    it("tightens without revoking held slots and admits nobody until held drops below it", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 3 });
      for (const slotId of ["s1", "s2", "s3"]) await t.grant("p", slotId);
      await t.enqueue("p", "w1");
      await t.setLearned("p", { concurrency: 1 });

      const snapshot = await t.snapshot("p");
      expect(snapshot).toMatchObject({ held: 3, limit: 1, slotIds: ["s1", "s2", "s3"] });
      expect(snapshot.learned.concurrency).toBe(1);
      expect((await t.store.renew("p", "s2")).type).toBe("renewed");

      await t.release("p", "s1");
      await t.release("p", "s2");
      expect(t.events.grants).toEqual([]);
      await t.release("p", "s3");
      expect(t.events.grants).toMatchObject([{ slot: { slotId: "w1", heldAtGrant: 1 } }]);
      expect(await t.acquire("p", "n1")).toMatchObject({ reason: "concurrency" });
    });

    it("loosens and serves waiters at once, in order, never above maxConcurrent", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 3 });
      await t.setLearned("p", { concurrency: 1 });
      await t.grant("p", "s1");
      for (const slotId of ["w1", "w2", "w3"]) await t.enqueue("p", slotId);

      await t.setLearned("p", { concurrency: 10 });
      expect(t.events.grants.map((g) => [g.slot.slotId, g.slot.heldAtGrant])).toEqual([
        ["w1", 2],
        ["w2", 3],
      ]);
      const snapshot = await t.snapshot("p");
      expect(snapshot).toMatchObject({ held: 3, limit: 3, waiterIds: ["w3"] });
    });
  });

  describe("upsertPool", () => {
    it("keeps holders and waiters, and a raised maxConcurrent serves waiters at once", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1 });
      await t.grant("p", "s1");
      for (const slotId of ["w1", "w2", "w3"]) await t.enqueue("p", slotId);

      await t.definePool("p", { maxConcurrent: 3 });
      expect(t.events.grantedIds("p")).toEqual(["w1", "w2"]);
      expect(await t.snapshot("p")).toMatchObject({
        held: 3,
        limit: 3,
        slotIds: ["s1", "w1", "w2"],
        waiterIds: ["w3"],
      });

      // Lowering keeps every holder; the queue waits until held is below the new limit.
      await t.definePool("p", { maxConcurrent: 1 });
      expect(await t.snapshot("p")).toMatchObject({ held: 3, limit: 1, waiterIds: ["w3"] });
      await t.release("p", "s1");
      await t.release("p", "w1");
      expect(t.events.grantedIds("p")).toEqual(["w1", "w2"]);
      await t.release("p", "w2");
      expect(t.events.grantedIds("p")).toEqual(["w1", "w2", "w3"]);
    });
  });

  describe("removePool", () => {
    it("forgets holders and waiters", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1 });
      await t.grant("p", "s1");
      await t.enqueue("p", "w1");
      await t.store.removePool("p");

      expect(await t.store.snapshot("p")).toBeNull();
      expect((await t.store.release("p", "s1")).released).toBe(false);
      expect(await t.store.renew("p", "s1")).toEqual({ type: "not_found" });
      expect(await t.store.cancel("p", "w1")).toEqual({ type: "unknown" });
      expect(t.events.grants).toEqual([]);

      await t.definePool("p", { maxConcurrent: 1 });
      expect(await t.snapshot("p")).toMatchObject({
        held: 0,
        queued: 0,
        slotIds: [],
        waiterIds: [],
      });
      expect((await t.grant("p", "s2")).heldAtGrant).toBe(1);
    });

    it("stops timers for the removed pool: its leases are never reported", async () => {
      const t = fixture();
      await t.definePool("p", { termMs: 10_000 });
      await t.grant("p", "s1");
      await t.store.removePool("p");
      await t.advance(20_000);
      expect(t.events.reclaims).toEqual([]);
    });
  });
}
