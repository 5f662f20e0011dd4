import { describe, expect, it } from "vitest";
import { HeldSlots } from "../../adapters/redis/held-slots.js";

const slot = (slotId: string, leaseDeadline: number, requestDeadline = 10_000) => ({
  slotId,
  leaseDeadline,
  requestDeadline,
});

describe("HeldSlots (a process's record of its Redis slots)", () => {
  it("offers for adoption the slots whose lease still runs, with the request time left", () => {
    const held = new HeldSlots();
    held.add("llm", slot("a", 1_000));
    held.add("llm", slot("b", 2_000));
    held.add("embed", slot("c", 3_000, 5_000));
    expect(held.adoptable(1_500)).toEqual([
      { pool: "llm", slotId: "b", requestLeftMs: 8_500, leaseDeadline: 2_000 },
      { pool: "embed", slotId: "c", requestLeftMs: 3_500, leaseDeadline: 3_000 },
    ]);
    // The one whose lease ran out is forgotten for good, as Redis reclaimed (or would reclaim) it.
    expect(held.adoptable(0).map((known) => known.slotId)).toEqual(["b", "c"]);
  });

  it("follows renewals, releases and removed pools", () => {
    const held = new HeldSlots();
    held.add("llm", slot("a", 1_000));
    held.add("llm", slot("b", 1_000));
    held.add("embed", slot("c", 1_000));
    held.renewed("a", 4_000);
    held.renewed("unknown", 4_000);
    held.delete("b");
    held.forgetPool("embed");
    expect(held.adoptable(2_000).map((known) => known.slotId)).toEqual(["a"]);
    held.clear();
    expect(held.adoptable(0)).toEqual([]);
  });
});
