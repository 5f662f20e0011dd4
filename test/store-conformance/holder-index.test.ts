import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HolderIndex } from "../../src/store/holder-index.js";
import type { HeldSlot } from "../../src/store/types.js";

const slot = (slotId: string, leaseDeadline = 1_000): HeldSlot => ({
  slotId,
  acquiredAt: 0,
  leaseDeadline,
  requestDeadline: 5_000,
  heldAtGrant: 1,
});

describe("HolderIndex", () => {
  it("finds, replaces in place and deletes slots, in grant order", () => {
    const holders = new HolderIndex();
    for (const id of ["a-0000001", "a-0000002", "a-0000003"]) holders.set(id, slot(id));
    expect(holders.size).toBe(3);
    holders.set("a-0000002", slot("a-0000002", 2_000));
    expect(holders.get("a-0000002")?.leaseDeadline).toBe(2_000);
    expect(holders.ids()).toEqual(["a-0000001", "a-0000002", "a-0000003"]);
    expect(holders.delete("a-0000002")).toBe(true);
    expect(holders.delete("a-0000002")).toBe(false);
    expect(holders.get("a-0000002")).toBeUndefined();
    expect(holders.get("unknown")).toBeUndefined();
    expect([...holders.values()].map((held) => held.slotId)).toEqual(["a-0000001", "a-0000003"]);
  });

  it("tells apart ids that hash alike, keeping grant order through growth and churn", () => {
    const holders = new HolderIndex();
    // Same last seven characters and length: the same hash.
    holders.set("x-1234567", slot("x-1234567"));
    holders.set("s1", slot("s1"));
    holders.set("y-1234567", slot("y-1234567"));
    expect(holders.size).toBe(3);
    expect(holders.ids()).toEqual(["x-1234567", "s1", "y-1234567"]);
    expect(holders.get("x-1234567")?.slotId).toBe("x-1234567");
    expect(holders.get("y-1234567")?.slotId).toBe("y-1234567");
    expect(holders.get("z-1234567")).toBeUndefined();
    expect(holders.delete("z-1234567")).toBe(false);
    expect(holders.delete("x-1234567")).toBe(true);
    expect(holders.get("y-1234567")?.slotId).toBe("y-1234567");
    // A pool that never empties: many grants and releases, and a burst of holders.
    for (let index = 0; index < 3_000; index++) {
      const id = `z-${String(index).padStart(7, "0")}`;
      holders.set(id, slot(id));
      if (index % 3 !== 0) expect(holders.delete(id)).toBe(true);
    }
    expect(holders.size).toBe(1_002);
    for (let index = 0; index < 3_000; index += 3) {
      expect(holders.delete(`z-${String(index).padStart(7, "0")}`)).toBe(true);
    }
    expect(holders.ids()).toEqual(["s1", "y-1234567"]);
    expect(holders.get("s1")?.slotId).toBe("s1");
  });

  it("behaves as a map by slot id under any sequence of operations", () => {
    // Ids over a tiny alphabet collide often; short ones exercise ids under seven characters.
    const id = fc.stringMatching(/^[ab01]{1,9}$/);
    const operation = fc.oneof(
      fc.record({ type: fc.constant("set" as const), id, lease: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ type: fc.constant("delete" as const), id }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 200 }), (operations) => {
        const holders = new HolderIndex();
        const model = new Map<string, HeldSlot>();
        for (const op of operations) {
          if (op.type === "set") {
            const held = slot(op.id, op.lease);
            holders.set(op.id, held);
            model.set(op.id, held);
          } else {
            expect(holders.remove(op.id)).toBe(model.get(op.id));
            model.delete(op.id);
          }
          expect(holders.size).toBe(model.size);
          expect(holders.ids()).toEqual([...model.keys()]);
          for (const [key, held] of model) expect(holders.get(key)).toBe(held);
        }
      }),
      { seed: 7, numRuns: 300 },
    );
  });
});
