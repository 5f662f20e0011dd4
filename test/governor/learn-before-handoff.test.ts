import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";
import type { SlotStore } from "../../src/store/types.js";
import { asyncBoundary } from "../store-conformance/async-boundary-store.js";
import { track } from "./helpers.js";

const STORES: [string, (clock: ManualClock) => SlotStore][] = [
  ["memory", (clock) => new MemorySlotStore({ clock })],
  ["memory behind an async boundary", (clock) => asyncBoundary(new MemorySlotStore({ clock }))],
];

describe.each(STORES)(
  "an outcome that tightens the limits is learned before the handoff (%s)",
  (_, makeStore) => {
    function setup() {
      const clock = new ManualClock(1_700_000_000_000);
      const store = makeStore(clock);
      const governor = createGovernor({ clock, store });
      return { clock, store, governor };
    }

    it("a 429 lowers the limit before the released slot could go to a waiter", async () => {
      const { governor, store } = setup();
      await governor.definePool("llm", { maxConcurrent: 3, queue: { size: 5, timeoutMs: 5_000 } });
      const first = await governor.acquire("llm");
      await governor.acquire("llm");
      const third = await governor.acquire("llm"); // granted with 3 held
      const waiter = track(governor.acquire("llm", { waitMs: 5_000 }));
      await store.whenIdle?.();

      await expect(governor.release("llm", third.slotId, { status: 429 })).resolves.toEqual({
        released: true,
      });
      await store.whenIdle?.();
      // Congested at 3: the limit is 2, and 2 are held, so the waiter keeps waiting.
      const status = await governor.status("llm");
      expect([status.effectiveLimit, status.held, status.queued]).toEqual([2, 2, 1]);
      expect(waiter.settled()).toBe(false);

      await governor.release("llm", first.slotId, { status: 200 });
      await expect(waiter.promise).resolves.toMatchObject({ slotId: expect.any(String) });
      expect((await governor.status("llm")).held).toBe(2);
    });

    it("a Retry-After pause keeps the released slot from the waiter until it ends", async () => {
      const { governor, clock, store } = setup();
      await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 5, timeoutMs: 5_000 } });
      const held = await governor.acquire("llm");
      const waiter = track(governor.acquire("llm", { waitMs: 5_000 }));
      await store.whenIdle?.();

      await governor.release("llm", held.slotId, { status: 503, retryAfterMs: 1_000 });
      await clock.advance(999);
      await store.whenIdle?.();
      expect(waiter.settled()).toBe(false);
      expect((await governor.status("llm")).held).toBe(0);
      await expect(governor.acquire("llm")).rejects.toThrow(
        "The pool is paused (the upstream asked to wait, or shared state is being restored); retry in about 1 ms.",
      );

      await clock.advance(1);
      await expect(waiter.promise).resolves.toMatchObject({ queuedMs: 1_000 });
    });

    it("frees the slot even when writing the learned limits fails, and reports the failure", async () => {
      const { governor, store } = setup();
      await governor.definePool("llm", { maxConcurrent: 3 });
      await governor.acquire("llm");
      const slot = await governor.acquire("llm");
      const failure = new Error("store write failed");
      store.setLearned = () => Promise.reject(failure);
      await expect(governor.release("llm", slot.slotId, { status: 429 })).rejects.toBe(failure);
      await store.whenIdle?.();
      expect((await governor.status("llm")).held).toBe(1);
    });

    it("a release whose slot is gone learns nothing, whatever its outcome says", async () => {
      const { governor, store } = setup();
      await governor.definePool("llm", { maxConcurrent: 3 });
      const slot = await governor.acquire("llm");
      await governor.release("llm", slot.slotId);
      await expect(
        governor.release("llm", slot.slotId, { status: 429, retryAfterMs: 60_000 }),
      ).resolves.toEqual({ released: false });
      await store.whenIdle?.();
      const status = await governor.status("llm");
      expect(status.learned).toEqual({ concurrency: null, rpm: null, pausedUntil: 0 });
      expect(governor.metrics.totals("llm", 0, Number.POSITIVE_INFINITY).throttled).toBe(0);
    });
  },
);
