import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { SlotNotFoundError } from "../../src/errors.js";
import type { KeptLease } from "../../src/governor/lease-keeper.js";
import { LeaseKeeper } from "../../src/governor/lease-keeper.js";
import { manualGovernor, pendingRun } from "./helpers.js";

function lease(slotId: string): KeptLease {
  return { pool: "p", slotId, renewAt: 0, keptPrev: null, keptNext: null, keptBy: null };
}

describe("LeaseKeeper", () => {
  it("renews each tracked lease every interval from when it was tracked, until untracked", async () => {
    const clock = new ManualClock(0);
    const renewed: string[] = [];
    const keeper = new LeaseKeeper(clock, 10_000, (kept) =>
      renewed.push(`${kept.slotId}@${clock.now()}`),
    );
    const a = lease("a");
    const b = lease("b");
    const c = lease("c");
    keeper.track(a, clock.now());
    await clock.advance(4000);
    keeper.track(b, clock.now());
    keeper.track(c, clock.now());
    await clock.advance(6000); // a is due at 10 s
    keeper.untrack(c);
    await clock.advance(10_000); // b at 14 s, a at 20 s
    expect(renewed).toEqual(["a@10000", "b@14000", "a@20000"]);
    expect(keeper.size).toBe(2);
    keeper.untrack(a);
    keeper.untrack(a); // idempotent
    expect(keeper.size).toBe(1);
    keeper.stop();
    expect(keeper.size).toBe(0);
    await clock.advance(60_000);
    expect(renewed).toHaveLength(3);
  });

  it("survives a renewal that untracks leases", async () => {
    const clock = new ManualClock(0);
    const leases = ["a", "b", "c"].map(lease);
    const renewed: string[] = [];
    const keeper = new LeaseKeeper(clock, 1000, (kept) => {
      renewed.push(kept.slotId);
      for (const other of leases) keeper.untrack(other);
    });
    for (const kept of leases) keeper.track(kept, clock.now());
    await clock.advance(5000);
    expect(renewed).toEqual(["a"]);
    expect(keeper.size).toBe(0);
  });
});

describe("holds lost to a reclaim", () => {
  it("aborts the work of a run() whose slot was reclaimed, and frees its place", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, termMs: 5000, renewIntervalMs: 2000 });
    const work = pendingRun(governor, "llm");
    await new Promise((resolve) => setImmediate(resolve));
    expect(work.slotId()).not.toBe("");
    // The slot goes away under the work (as a reclaim in another process would take it).
    await governor.release("llm", work.slotId());
    await clock.advance(2000);
    expect(work.abortReason()).toBeInstanceOf(SlotNotFoundError);
    expect((await governor.status("llm")).held).toBe(0);
    await expect(governor.acquire("llm")).resolves.toBeTruthy();
    work.finish();
    await work.running;
  });
});
