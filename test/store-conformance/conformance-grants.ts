import { describe, expect, it } from "vitest";
import { NOTHING_LEARNED, type StoreFixture } from "./store-fixture.js";

/** Grant fields, fail-fast rejection and pool isolation (SEMANTICS: acquire steps 2 and 3). */
export function describeGrantRules(fixture: () => StoreFixture): void {
  describe("grants", () => {
    it("grants a free slot at once with acquiredAt, lease and request deadlines from now", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 2, termMs: 10_000, requestTimeoutMs: 60_000 });
      const now = t.now();

      const first = await t.acquire("p", "s1");
      expect(first).toEqual({
        type: "granted",
        slot: {
          slotId: "s1",
          acquiredAt: now,
          leaseDeadline: now + 10_000,
          requestDeadline: now + 60_000,
          heldAtGrant: 1,
        },
        figures: { held: 1, queued: 0, limit: 2 },
      });
      await t.advance(250);
      const second = await t.acquire("p", "s2");
      expect(second).toEqual({
        type: "granted",
        slot: {
          slotId: "s2",
          acquiredAt: now + 250,
          leaseDeadline: now + 10_250,
          requestDeadline: now + 60_250,
          heldAtGrant: 2,
        },
        figures: { held: 2, queued: 0, limit: 2 },
      });
      // Immediate grants are answered to the caller, never announced to the listener.
      expect(t.events.grants).toEqual([]);
    });

    it("caps the first lease at the request deadline when the term is longer", async () => {
      const t = fixture();
      await t.definePool("p", { termMs: 30_000, requestTimeoutMs: 5_000 });
      const slot = await t.grant("p", "s1");
      expect(slot.requestDeadline).toBe(t.now() + 5_000);
      expect(slot.leaseDeadline).toBe(slot.requestDeadline);
    });

    it("counts heldAtGrant as the slots held right after the grant", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 3 });
      expect((await t.grant("p", "s1")).heldAtGrant).toBe(1);
      expect((await t.grant("p", "s2")).heldAtGrant).toBe(2);
      await t.release("p", "s1");
      expect((await t.grant("p", "s3")).heldAtGrant).toBe(2);
    });

    it("shows holders in grant order and default learned limits in the snapshot", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 3 });
      await t.grant("p", "s1");
      await t.grant("p", "s2");
      expect(await t.snapshot("p")).toEqual({
        held: 2,
        queued: 0,
        limit: 3,
        learned: NOTHING_LEARNED,
        slotIds: ["s1", "s2"],
        waiterIds: [],
      });
      expect(await t.store.snapshot("nowhere")).toBeNull();
    });

    it("keeps pools independent", async () => {
      const t = fixture();
      await t.definePool("p");
      await t.definePool("q");
      await t.grant("p", "s1");
      await t.grant("q", "s2");
      expect((await t.snapshot("p")).slotIds).toEqual(["s1"]);
      expect((await t.snapshot("q")).slotIds).toEqual(["s2"]);
      expect((await t.store.release("q", "s1")).released).toBe(false);
      expect((await t.snapshot("p")).held).toBe(1);
    });
  });

  describe("fail-fast rejection", () => {
    it("rejects at the limit with reason concurrency and no estimate, changing nothing", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1 });
      await t.grant("p", "s1");
      const result = await t.acquire("p", "s2", 0);
      expect(result).toEqual({
        type: "rejected",
        reason: "concurrency",
        retryAfterMs: null,
        figures: { held: 1, queued: 0, limit: 1 },
      });
      const snapshot = await t.snapshot("p");
      expect(snapshot.slotIds).toEqual(["s1"]);
      expect(snapshot.waiterIds).toEqual([]);
      // A rejected id leaves no trace.
      expect(await t.store.cancel("p", "s2")).toEqual({ type: "unknown" });
      expect((await t.store.release("p", "s2")).released).toBe(false);
    });

    it("never queues when queueSize is 0, whatever the wait", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1, queueSize: 0 });
      await t.grant("p", "s1");
      const result = await t.acquire("p", "s2", 60_000);
      expect(result).toMatchObject({ type: "rejected", reason: "concurrency", retryAfterMs: null });
      expect((await t.snapshot("p")).waiterIds).toEqual([]);
      await t.release("p", "s1");
      expect(t.events.grants).toEqual([]);
    });
  });
}
