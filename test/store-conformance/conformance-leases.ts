import { describe, expect, it } from "vitest";
import type { StoreFixture } from "./store-fixture.js";
import { NOTHING_SHARED } from "./store-fixture.js";

/** Renew, release and lease reclaim. */
export function describeLeaseRules(fixture: () => StoreFixture): void {
  describe("renew", () => {
    it("moves the lease to now + termMs and keeps the slot past its first deadline", async () => {
      const t = fixture();
      await t.definePool("p", { termMs: 10_000 });
      const start = t.now();
      await t.grant("p", "s1");
      await t.advance(4_000);
      expect(await t.store.renew("p", "s1")).toEqual({
        type: "renewed",
        leaseDeadline: start + 14_000,
      });
      await t.advance(9_000);
      expect(t.events.reclaims).toEqual([]);
      expect((await t.snapshot("p")).slotIds).toEqual(["s1"]);
      expect(await t.store.renew("p", "s1")).toEqual({
        type: "renewed",
        leaseDeadline: start + 23_000,
      });
    });

    it("renews one millisecond before the deadline", async () => {
      const t = fixture();
      await t.definePool("p", { termMs: 10_000 });
      await t.grant("p", "s1");
      await t.advance(9_999);
      expect(await t.store.renew("p", "s1")).toEqual({
        type: "renewed",
        leaseDeadline: t.now() + 10_000,
      });
    });

    it("never extends past the request deadline, then answers capped while the slot stays held", async () => {
      const t = fixture();
      await t.definePool("p", { termMs: 10_000, requestTimeoutMs: 15_000 });
      const start = t.now();
      await t.grant("p", "s1");
      await t.advance(8_000);
      expect(await t.store.renew("p", "s1")).toEqual({
        type: "renewed",
        leaseDeadline: start + 15_000,
      });
      await t.advance(1_000);
      expect(await t.store.renew("p", "s1")).toEqual({
        type: "capped",
        requestDeadline: start + 15_000,
      });
      await t.advance(5_999);
      expect((await t.snapshot("p")).slotIds).toEqual(["s1"]);
      await t.advance(1);
      expect(t.events.reclaimedIds("p")).toEqual(["s1"]);
      expect(await t.store.renew("p", "s1")).toEqual({ type: "not_found" });
    });

    it("answers not_found after release, after the lease ran out, and for unknown ids", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 2, termMs: 10_000 });
      await t.grant("p", "s1");
      await t.release("p", "s1");
      expect(await t.store.renew("p", "s1")).toEqual({ type: "not_found" });

      await t.grant("p", "s2");
      await t.advance(10_000);
      expect(await t.store.renew("p", "s2")).toEqual({ type: "not_found" });
      expect(await t.store.renew("p", "never")).toEqual({ type: "not_found" });
      expect(await t.store.renew("nowhere", "s2")).toEqual({ type: "not_found" });
    });
  });

  describe("release", () => {
    it("is idempotent and returns the slot as held, renewed lease included", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 2, termMs: 10_000 });
      const slot = await t.grant("p", "s1");
      await t.grant("p", "s2");
      await t.advance(1_000);
      const renewed = await t.store.renew("p", "s1");
      expect(renewed.type).toBe("renewed");

      const first = await t.store.release("p", "s1");
      if (first.releasedAt !== undefined) expect(first.releasedAt).toBe(t.now());
      expect({ ...first, releasedAt: undefined }).toEqual({
        released: true,
        slot: { ...slot, leaseDeadline: slot.leaseDeadline + 1_000 },
        held: 2,
        queued: 0,
        shared: NOTHING_SHARED,
      });
      const second = await t.store.release("p", "s1");
      expect(second.released).toBe(false);
      expect(second.slot).toBeUndefined();
      expect((await t.store.release("p", "never")).released).toBe(false);
      expect((await t.snapshot("p")).slotIds).toEqual(["s2"]);
    });

    it("inspect reads a held slot and the figures, changing nothing; null once it is gone", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1, termMs: 10_000 });
      const slot = await t.grant("p", "s1");
      await t.enqueue("p", "w1");
      expect(await t.store.inspect("p", "s1")).toEqual({
        slot,
        held: 1,
        queued: 1,
        shared: NOTHING_SHARED,
      });
      expect(await t.store.inspect("p", "w1")).toBeNull();
      expect(await t.store.inspect("p", "never")).toBeNull();
      expect(await t.store.inspect("nowhere", "s1")).toBeNull();
      const snapshot = await t.snapshot("p");
      expect([snapshot.slotIds, snapshot.waiterIds]).toEqual([["s1"], ["w1"]]);
      expect(t.events.grants).toEqual([]);

      await t.store.release("p", "s1");
      expect(await t.store.inspect("p", "s1")).toBeNull();
      await t.advance(10_000); // w1's lease runs out
      expect(await t.store.inspect("p", "w1")).toBeNull();
    });

    it("answers released:false once the lease ran out", async () => {
      const t = fixture();
      await t.definePool("p", { termMs: 10_000 });
      await t.grant("p", "s1");
      await t.advance(10_000);
      expect((await t.store.release("p", "s1")).released).toBe(false);
    });
  });

  describe("reclaim", () => {
    it("reclaims at the lease deadline on its own, reports it and serves the next waiter", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1, termMs: 10_000, requestTimeoutMs: 60_000 });
      const start = t.now();
      await t.grant("p", "s1");
      await t.advance(3_000);
      await t.enqueue("p", "w1");
      await t.advance(6_999);
      expect(t.events.reclaims).toEqual([]);
      expect(t.events.grants).toEqual([]);

      // No store call between the deadline and the assertions: the store acts by itself.
      await t.advance(1);
      expect(t.events.reclaims).toEqual([{ pool: "p", slotIds: ["s1"] }]);
      expect(t.events.grants).toEqual([
        {
          pool: "p",
          slot: {
            slotId: "w1",
            acquiredAt: start + 10_000,
            leaseDeadline: start + 20_000,
            requestDeadline: start + 70_000,
            heldAtGrant: 1,
          },
          queuedMs: 7_000,
        },
      ]);
      expect((await t.snapshot("p")).slotIds).toEqual(["w1"]);
    });

    it("reclaims every expired slot with no traffic at all", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 3, termMs: 10_000 });
      await t.grant("p", "s1");
      await t.advance(1_000);
      await t.grant("p", "s2");
      await t.grant("p", "s3");
      await t.advance(5_000);
      await t.store.renew("p", "s3");
      await t.advance(10_000);
      expect(t.events.reclaimedIds("p").sort()).toEqual(["s1", "s2", "s3"]);
      const snapshot = await t.snapshot("p");
      expect(snapshot.held).toBe(0);
      expect(snapshot.slotIds).toEqual([]);
    });

    it("frees the slot for the next acquire once the deadline is reached", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1, termMs: 10_000 });
      await t.grant("p", "s1");
      await t.advance(9_999);
      expect(await t.acquire("p", "s2")).toMatchObject({ type: "rejected", reason: "concurrency" });
      await t.advance(1);
      expect((await t.grant("p", "s3")).heldAtGrant).toBe(1);
    });
  });
}
