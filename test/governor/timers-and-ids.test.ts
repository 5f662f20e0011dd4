import { afterEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/clock/clock.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { DeadlineTimer } from "../../src/governor/deadline-timer.js";
import { newSlotId } from "../../src/governor/slot-id.js";

describe("systemClock", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("honours delays beyond Node's timer range instead of firing after 1 ms", () => {
    vi.useFakeTimers();
    const day = 24 * 60 * 60 * 1000;
    let fired = 0;
    systemClock.setTimeout(() => fired++, 40 * day);
    vi.advanceTimersByTime(39 * day);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(day);
    expect(fired).toBe(1);
  });

  it("cancels a long timer at any stage of its chain", () => {
    vi.useFakeTimers();
    const day = 24 * 60 * 60 * 1000;
    let fired = 0;
    const handle = systemClock.setTimeout(() => fired++, 60 * day);
    vi.advanceTimersByTime(30 * day);
    systemClock.clearTimeout(handle);
    vi.advanceTimersByTime(60 * day);
    expect(fired).toBe(0);
  });
});

describe("DeadlineTimer", () => {
  it("expires items in deadline order whether they arrive in order or not", async () => {
    const clock = new ManualClock(0);
    const expired: string[] = [];
    const timer = new DeadlineTimer<string>(
      clock,
      (item) => expired.push(`${item}@${clock.now()}`),
      () => true,
    );
    timer.add(300, "c");
    timer.add(500, "e");
    timer.add(100, "a"); // earlier than the last: goes to the heap
    timer.add(500, "e2");
    timer.add(200, "b");
    timer.add(400, "d");
    await clock.advance(1000);
    expect(expired).toEqual(["a@100", "b@200", "c@300", "d@400", "e@500", "e2@500"]);
  });

  it("skips items that stopped mattering, and drops them from the front at once", async () => {
    const clock = new ManualClock(0);
    const live = new Set(["a", "b", "c"]);
    const expired: string[] = [];
    const timer = new DeadlineTimer<string>(
      clock,
      (item) => expired.push(item),
      (item) => live.has(item),
    );
    for (const [deadline, item] of [
      [100, "a"],
      [200, "b"],
      [300, "c"],
    ] as const) {
      timer.add(deadline, item);
    }
    live.delete("a");
    live.delete("c");
    timer.dropSettledTop();
    await clock.advance(1000);
    expect(expired).toEqual(["b"]);
  });
});

describe("newSlotId", () => {
  it("makes version 4 UUIDs, all distinct, across buffer refills", () => {
    const ids = new Set<string>();
    // 5 000 ids: 20 refills of the text, across two fills of the random bytes.
    for (let i = 0; i < 5000; i++) {
      const id = newSlotId();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(5000);
  });
});
