import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { GovernorClosedError, PoolNotFoundError } from "../../src/errors.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";
import { manualGovernor, pendingRun } from "./helpers.js";

/**
 * A `run()` caller handed a slot starts its function on a later microtask. A `close()` or
 * `removePool()` made in between (the same synchronous stretch as the release that granted
 * it) must stop it from starting: its pool or governor is gone.
 */
describe("a run() granted in the same microtask as close() or removePool()", () => {
  async function queuedRun() {
    const clock = new ManualClock();
    const store = new MemorySlotStore({ clock });
    const governor = createGovernor({ clock, store });
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 1, timeoutMs: 10_000 } });
    const held = await governor.acquire("llm");
    let started = 0;
    const run = governor.run(
      "llm",
      () => {
        started++;
      },
      { waitMs: 10_000 },
    );
    expect((await governor.status("llm")).queued).toBe(1);
    return { governor, store, held, run, started: () => started };
  }

  it("close(): the function never starts, run() fails with GovernorClosedError", async () => {
    const { governor, held, run, started } = await queuedRun();
    // The release hands the slot to the queued run(); close() follows before it can start.
    const released = governor.release("llm", held.slotId);
    const closed = governor.close();
    await expect(run).rejects.toBeInstanceOf(GovernorClosedError);
    await released;
    await closed;
    expect(started()).toBe(0);
  });

  it("removePool(): the function never starts, run() fails with PoolNotFoundError", async () => {
    const { governor, store, held, run, started } = await queuedRun();
    const released = governor.release("llm", held.slotId);
    const removed = governor.removePool("llm");
    await expect(run).rejects.toBeInstanceOf(PoolNotFoundError);
    await released;
    await removed;
    expect(started()).toBe(0);
    // A pool of the same name defined again starts empty: nothing of the refused run holds it.
    await governor.definePool("llm", { maxConcurrent: 1 });
    expect((await store.snapshot("llm"))?.slotIds).toEqual([]);
    await governor.close();
  });

  it("a pool updated in place (definePool on a live pool) still starts its granted runs", async () => {
    const { governor, held, run, started } = await queuedRun();
    const released = governor.release("llm", held.slotId);
    const updated = governor.definePool("llm", {
      maxConcurrent: 2,
      queue: { size: 1, timeoutMs: 10_000 },
    });
    await run;
    await released;
    await updated;
    expect(started()).toBe(1);
    await governor.close();
  });
});

describe("after close()", () => {
  it("takes no new work, and aborts run() work still holding a slot", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 2 });
    const work = pendingRun(governor, "llm");
    await new Promise((resolve) => setImmediate(resolve));
    await governor.close();
    expect(work.abortReason()).toBeInstanceOf(GovernorClosedError);
    work.finish();
    await work.running;
    const refused = [
      governor.acquire("llm"),
      governor.run("llm", () => 1),
      governor.renew("llm", "any"),
      governor.definePool("other", { maxConcurrent: 1 }),
      governor.defineBudget("b", { originMaxConcurrent: null }),
      governor.resetLearned("llm"),
    ];
    for (const attempt of refused) {
      await expect(attempt).rejects.toMatchObject({ code: "closed" });
    }
    // Releasing stays possible (it never throws), and closing again is a no-op.
    await expect(governor.release("llm", "any")).resolves.toEqual({ released: false });
    await expect(governor.close()).resolves.toBeUndefined();
  });
});

describe("drain()", () => {
  it("turns waiters and new work away, while held slots renew, release and run to the end", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 2, queue: { size: 5, timeoutMs: 10_000 } });
    const held = await governor.acquire("llm");
    const work = pendingRun(governor, "llm");
    const waiter = governor.acquire("llm", { waitMs: 5_000 });
    await new Promise((resolve) => setImmediate(resolve));
    governor.drain();
    await expect(waiter).rejects.toBeInstanceOf(GovernorClosedError);
    // The message says it drains, not that it was closed: held work still runs.
    await expect(waiter).rejects.toMatchObject({ code: "closed", draining: true });
    await expect(governor.acquire("llm")).rejects.toThrow(/draining for shutdown/);
    await expect(governor.run("llm", () => 1)).rejects.toBeInstanceOf(GovernorClosedError);
    await expect(governor.renew("llm", held.slotId)).resolves.toHaveProperty("leaseDeadline");
    // Past the first term: the run's lease is still renewed while it drains.
    await clock.advance(20_000);
    await expect(governor.renew("llm", held.slotId)).resolves.toHaveProperty("leaseDeadline");
    await clock.advance(20_000);
    expect(work.abortReason()).toBeNull();
    work.finish();
    await expect(work.running).resolves.toBe("finished");
    await expect(governor.release("llm", held.slotId)).resolves.toEqual({ released: true });
    expect((await governor.status("llm")).held).toBe(0);
    await governor.close();
    await expect(governor.acquire("llm")).rejects.toMatchObject({
      draining: false,
      message: "The governor was closed.",
    });
  });
});
