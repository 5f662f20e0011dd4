import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";
import type { SlotStore } from "../../src/store/types.js";
import { manualGovernor } from "./helpers.js";

/**
 * Callers' promises are settled without a `reject` function of their own (a failure resolves
 * them with a rejected promise): every failure must still reject with the very error, and no
 * other promise may surface as an unhandled rejection.
 */
describe("failed callers", () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on("unhandledRejection", onUnhandled);
  });
  afterEach(() => {
    process.off("unhandledRejection", onUnhandled);
  });

  /** Lets Node run its unhandled-rejection check (it runs after the microtasks drain). */
  const afterRejectionCheck = () => new Promise((resolve) => setTimeout(resolve, 5));

  it("reject with the same error for throws, rejections, turn-aways and timeouts", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 1, timeoutMs: 1_000 } });
    const thrown = new Error("thrown");
    const rejected = new Error("rejected");
    await expect(
      governor.run("llm", () => {
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    await expect(governor.run("llm", () => Promise.reject(rejected))).rejects.toBe(rejected);

    let finish!: () => void;
    const holding = governor.run("llm", () => new Promise<void>((resolve) => (finish = resolve)));
    const timingOut = governor.run("llm", () => "never", { waitMs: 1_000 });
    await expect(governor.run("llm", () => "never", { waitMs: 1_000 })).rejects.toMatchObject({
      code: "too_many_requests",
      reason: "queue_full",
    });
    const timedOut = expect(timingOut).rejects.toMatchObject({ code: "queue_timeout" });
    await clock.advance(1_001);
    await timedOut;
    finish();
    await expect(holding).resolves.toBeUndefined();
    await afterRejectionCheck();
    expect(unhandled).toEqual([]);
  });

  it("settle a throwing run only after an asynchronous release, with no unhandled rejection meanwhile", async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const memory = new MemorySlotStore({ clock });
    let releases = 0;
    // A store whose release answers on a later macrotask, as a networked store does.
    const slowRelease: SlotStore = new Proxy(memory, {
      get(target, key, receiver) {
        if (key === "release") {
          return (pool: string, slotId: string) =>
            new Promise((resolve) =>
              setTimeout(() => {
                releases++;
                resolve(memory.release(pool, slotId));
              }, 20),
            );
        }
        const value = Reflect.get(target, key, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const governor = createGovernor({ clock, store: slowRelease });
    await governor.definePool("llm", { maxConcurrent: 1 });
    const thrown = new Error("thrown");
    const running = governor.run("llm", () => {
      throw thrown;
    });
    let settledEarly = false;
    running.catch(() => {
      settledEarly = releases === 0;
    });
    await expect(running).rejects.toBe(thrown);
    expect(settledEarly).toBe(false);
    await afterRejectionCheck();
    expect(unhandled).toEqual([]);
  });

  it("still report an unhandled rejection when the caller ignores its failed promise", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1 });
    const ignored = new Error("ignored by the caller");
    void governor.run("llm", () => {
      throw ignored;
    });
    await afterRejectionCheck();
    expect(unhandled).toEqual([ignored]);
  });
});
