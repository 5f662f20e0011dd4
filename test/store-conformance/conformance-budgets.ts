import { describe, expect, it } from "vitest";
import type { StoreFixture } from "./store-fixture.js";

async function defineMembers(
  t: StoreFixture,
  origin: number | null,
  reserved: { a: number; b: number },
): Promise<void> {
  await t.store.upsertBudget("shared", origin);
  await t.definePool("a", {
    maxConcurrent: 10,
    budget: { id: "shared", reservedConcurrent: reserved.a },
  });
  await t.definePool("b", {
    maxConcurrent: 10,
    budget: { id: "shared", reservedConcurrent: reserved.b },
  });
}

async function grantMany(t: StoreFixture, pool: string, count: number): Promise<void> {
  for (let i = 1; i <= count; i++) await t.grant(pool, `${pool}${i}`);
}

/** Budgets: reservations, borrowing from the unallocated share, the origin ceiling, sibling handoff. */
export function describeBudgetRules(fixture: () => StoreFixture): void {
  describe("budgets", () => {
    it("lets a pool use its reservation even after a sibling borrowed the unallocated share", async () => {
      const t = fixture();
      await defineMembers(t, 5, { a: 2, b: 2 });
      await grantMany(t, "b", 3);
      expect(await t.acquire("b", "b4")).toEqual({
        type: "rejected",
        reason: "budget",
        retryAfterMs: null,
        figures: { held: 3, queued: 0, limit: 10 },
      });
      await grantMany(t, "a", 2);
      expect(await t.acquire("a", "a3")).toMatchObject({ reason: "budget", retryAfterMs: null });
    });

    it("borrows beyond the reservation only from the unallocated share", async () => {
      const t = fixture();
      await defineMembers(t, 4, { a: 1, b: 1 });
      await grantMany(t, "a", 3);
      expect(await t.acquire("a", "a4")).toMatchObject({ reason: "budget" });
      await grantMany(t, "b", 1);
      expect(await t.acquire("b", "b2")).toMatchObject({ reason: "budget" });
    });

    it("never holds more than the origin across the budget, reservations notwithstanding", async () => {
      const t = fixture();
      await defineMembers(t, 2, { a: 2, b: 2 });
      await grantMany(t, "a", 2);
      expect(await t.acquire("b", "b1")).toMatchObject({ reason: "budget" });
      const held = (await t.snapshot("a")).held + (await t.snapshot("b")).held;
      expect(held).toBe(2);
    });

    it("names concurrency before budget when the pool itself is full", async () => {
      const t = fixture();
      await t.store.upsertBudget("shared", 1);
      await t.definePool("a", {
        maxConcurrent: 1,
        budget: { id: "shared", reservedConcurrent: 0 },
      });
      await t.grant("a", "a1");
      expect(await t.acquire("a", "a2")).toMatchObject({ reason: "concurrency" });
    });

    it("serves a sibling pool's waiter when a slot is released", async () => {
      const t = fixture();
      await defineMembers(t, 2, { a: 0, b: 0 });
      await grantMany(t, "a", 2);
      expect(await t.acquire("b", "w1", 10_000)).toEqual({
        type: "queued",
        figures: { held: 0, queued: 1, limit: 10 },
      });
      await t.advance(100);
      await t.release("a", "a1");
      expect(t.events.grants).toMatchObject([{ pool: "b", slot: { slotId: "w1" }, queuedMs: 100 }]);
      expect((await t.snapshot("b")).slotIds).toEqual(["w1"]);
    });

    it("serves the releasing pool's queue first, then the others in the order they joined", async () => {
      const t = fixture();
      await t.store.upsertBudget("shared", 1);
      const member = { budget: { id: "shared", reservedConcurrent: 0 }, maxConcurrent: 5 };
      for (const pool of ["a", "b", "c"]) await t.definePool(pool, member);
      await t.grant("b", "b1");
      // Enqueued against the join order, so only the rule can explain the order of handoffs.
      await t.enqueue("c", "c-waiter");
      await t.enqueue("a", "a-waiter");
      await t.enqueue("b", "b-waiter");

      await t.release("b", "b1");
      expect(t.events.grantedIds()).toEqual(["b-waiter"]);
      await t.release("b", "b-waiter");
      expect(t.events.grantedIds()).toEqual(["b-waiter", "a-waiter"]);
      await t.release("a", "a-waiter");
      expect(t.events.grantedIds()).toEqual(["b-waiter", "a-waiter", "c-waiter"]);
    });

    it("sets no shared ceiling when the origin is null, or when the budget is removed", async () => {
      const t = fixture();
      await defineMembers(t, null, { a: 0, b: 0 });
      await grantMany(t, "a", 10);
      await grantMany(t, "b", 10);

      await t.store.upsertBudget("other", 1);
      await t.definePool("c", { maxConcurrent: 3, budget: { id: "other", reservedConcurrent: 0 } });
      await t.grant("c", "c1");
      expect(await t.acquire("c", "c2")).toMatchObject({ reason: "budget" });
      await t.store.removeBudget("other");
      await t.grant("c", "c2");
    });

    it("tells each grant the room its budget leaves the pool: reservation plus borrowable share", async () => {
      const t = fixture();
      await defineMembers(t, 4, { a: 1, b: 1 });
      // a: its reservation used, 2 unreserved slots left to borrow.
      expect((await t.grant("a", "a1")).budgetRoom).toBe(2);
      expect((await t.grant("a", "a2")).budgetRoom).toBe(1);
      expect((await t.grant("a", "a3")).budgetRoom).toBe(0);
      // b still has its reservation, and nothing more.
      expect((await t.grant("b", "b1")).budgetRoom).toBe(0);
      await t.definePool("free", { maxConcurrent: 2 });
      expect((await t.grant("free", "f1")).budgetRoom).toBeUndefined();
    });

    it("the budget's ceiling bounds the room, reservations notwithstanding", async () => {
      const t = fixture();
      await defineMembers(t, 3, { a: 2, b: 2 });
      expect((await t.grant("b", "b1")).budgetRoom).toBe(1);
      expect((await t.grant("a", "a1")).budgetRoom).toBe(1);
      expect((await t.grant("a", "a2")).budgetRoom).toBe(0);
    });

    it("frees a removed pool's share of the budget", async () => {
      const t = fixture();
      await defineMembers(t, 1, { a: 0, b: 0 });
      await t.grant("a", "a1");
      expect(await t.acquire("b", "b1")).toMatchObject({ reason: "budget" });
      await t.store.removePool("a");
      await t.grant("b", "b1");
    });
  });
}
