import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { AbortedError, PoolNotFoundError } from "../../src/errors.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";

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

  it("close(): the function never starts, run() fails with AbortedError", async () => {
    const { governor, held, run, started } = await queuedRun();
    // The release hands the slot to the queued run(); close() follows before it can start.
    const released = governor.release("llm", held.slotId);
    const closed = governor.close();
    await expect(run).rejects.toBeInstanceOf(AbortedError);
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
