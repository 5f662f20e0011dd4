import { describe, expect, it } from "vitest";
import type { StoreFixture } from "./store-fixture.js";

const MINUTE = 60_000;

/** The time gates: the RPM sliding window and the learned pause. */
export function describeGateRules(fixture: () => StoreFixture): void {
  describe("rpm sliding window", () => {
    it("admits exactly rpm grants in any rolling 60 s and says when the oldest leaves", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 10, rpm: 3, queueSize: 0 });
      // Releasing at once shows the gate counts grants, not holders.
      for (const slotId of ["a", "b", "c"]) {
        await t.grant("p", slotId);
        await t.release("p", slotId);
        await t.advance(10_000);
      }
      expect(await t.acquire("p", "d")).toEqual({
        type: "rejected",
        reason: "rpm",
        retryAfterMs: 30_000,
        figures: { held: 0, queued: 0, limit: 10 },
      });
      await t.advance(29_999);
      expect(await t.acquire("p", "e")).toMatchObject({ reason: "rpm", retryAfterMs: 1 });
      await t.advance(1);
      await t.grant("p", "f");
      // Now b (granted 10 s after a) is the oldest in the window.
      expect(await t.acquire("p", "g")).toMatchObject({ reason: "rpm", retryAfterMs: 10_000 });
    });

    it("queues a waiter whose turn falls within its wait and grants it when the window opens", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 5, rpm: 1 });
      const start = t.now();
      await t.grant("p", "s1");
      await t.release("p", "s1");
      await t.advance(20_000);

      expect(await t.acquire("p", "short", 39_999)).toMatchObject({
        type: "rejected",
        reason: "rpm",
        retryAfterMs: 40_000,
      });
      expect((await t.snapshot("p")).waiterIds).toEqual([]);
      await t.enqueue("p", "w1", 40_000);

      await t.advance(39_999);
      expect(t.events.grants).toEqual([]);
      await t.advance(1);
      expect(t.events.grants).toMatchObject([
        { pool: "p", slot: { slotId: "w1", acquiredAt: start + MINUTE }, queuedMs: 40_000 },
      ]);
    });

    it("counts handoffs to waiters in the window", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1, rpm: 2 });
      await t.grant("p", "s1");
      await t.enqueue("p", "w1");
      await t.advance(1_000);
      await t.release("p", "s1");
      expect(t.events.grantedIds()).toEqual(["w1"]);
      await t.release("p", "w1");
      expect(await t.acquire("p", "s2")).toMatchObject({ reason: "rpm", retryAfterMs: 59_000 });
    });

    it("applies a learned rpm tighter than the configured one", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 5, rpm: 5, queueSize: 0 });
      await t.setLearned("p", { rpm: 1 });
      await t.grant("p", "s1");
      expect(await t.acquire("p", "s2")).toMatchObject({ reason: "rpm", retryAfterMs: MINUTE });
      expect((await t.snapshot("p")).learned).toEqual({
        concurrency: null,
        rpm: 1,
        pausedUntil: 0,
      });
    });

    it("counts the grants made before an RPM gate was learned", async () => {
      const t = fixture();
      // Learning usually finds the upstream's rate limit after traffic has already flowed.
      await t.definePool("p", { maxConcurrent: 5, rpm: null, queueSize: 0 });
      for (const slotId of ["a", "b", "c"]) {
        await t.grant("p", slotId);
        await t.release("p", slotId);
        await t.advance(1_000);
      }
      await t.setLearned("p", { rpm: 2 });
      expect(await t.acquire("p", "d")).toMatchObject({ type: "rejected", reason: "rpm" });
      // a has left the window, b and c still fill it until b leaves.
      await t.advance(57_999);
      expect(await t.acquire("p", "e")).toMatchObject({ reason: "rpm", retryAfterMs: 1 });
      await t.advance(1);
      await t.grant("p", "f");
    });

    it("rejects a time gate with its estimate even when queueSize is 0", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 5, rpm: 1, queueSize: 0 });
      await t.grant("p", "s1");
      expect(await t.acquire("p", "s2", 120_000)).toMatchObject({
        type: "rejected",
        reason: "rpm",
        retryAfterMs: MINUTE,
      });
    });
  });

  describe("pause", () => {
    it("gates new admissions until pausedUntil without touching held slots", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 3 });
      await t.grant("p", "s1");
      await t.setLearned("p", { pausedUntil: t.now() + 5_000 });
      expect((await t.snapshot("p")).slotIds).toEqual(["s1"]);
      expect((await t.store.renew("p", "s1")).type).toBe("renewed");

      expect(await t.acquire("p", "n1", 0)).toEqual({
        type: "rejected",
        reason: "paused",
        retryAfterMs: 5_000,
        figures: { held: 1, queued: 0, limit: 3 },
      });
      expect(await t.acquire("p", "n2", 4_999)).toMatchObject({
        reason: "paused",
        retryAfterMs: 5_000,
      });
      await t.enqueue("p", "w1", 5_000);

      await t.advance(4_999);
      expect(t.events.grants).toEqual([]);
      await t.advance(1);
      expect(t.events.grants).toMatchObject([
        { slot: { slotId: "w1", heldAtGrant: 2 }, queuedMs: 5_000 },
      ]);
      // At pausedUntil the pause is over.
      await t.grant("p", "s3");
    });

    it("reports the later of the pause and the RPM turn", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 5, rpm: 1, queueSize: 0 });
      const start = t.now();
      await t.grant("p", "s1");
      await t.setLearned("p", { pausedUntil: start + 10_000 });
      expect(await t.acquire("p", "s2")).toMatchObject({ reason: "paused", retryAfterMs: MINUTE });
      await t.setLearned("p", { pausedUntil: start + 90_000 });
      expect(await t.acquire("p", "s3")).toMatchObject({ reason: "paused", retryAfterMs: 90_000 });
    });

    it("names the pause, with its end as the retry hint, to a fail-fast behind waiters", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 5, queueSize: 5 });
      await t.setLearned("p", { pausedUntil: t.now() + 10_000 });
      await t.enqueue("p", "w1", 60_000);
      await t.advance(1_000);
      expect(await t.acquire("p", "n1", 0)).toMatchObject({
        type: "rejected",
        reason: "paused",
        retryAfterMs: 9_000,
      });
    });

    it("names concurrency, not the pause, when both stand in the way", async () => {
      const t = fixture();
      await t.definePool("p", { maxConcurrent: 1, queueSize: 0 });
      await t.grant("p", "s1");
      await t.setLearned("p", { pausedUntil: t.now() + 5_000 });
      expect(await t.acquire("p", "s2")).toMatchObject({
        reason: "concurrency",
        retryAfterMs: null,
      });
    });
  });
}
