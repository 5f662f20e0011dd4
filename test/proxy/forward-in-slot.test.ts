import { afterAll, describe, expect, it } from "vitest";
import { forwardInSlot } from "../../adapters/hono/proxy/forward.js";
import type { SlotHold } from "../../adapters/hono/proxy/slot-hold.js";
import { createUpstreamClient } from "../../adapters/hono/proxy/upstream-call.js";
import { parseOrigin } from "../../adapters/hono/proxy/upstream-target.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { OutcomeReport } from "../../src/learning/types.js";

/** A hold whose abort (when given) is heard at once, as a hold aborted before the exchange. */
function holdAbortedWith(clock: ManualClock, reason: Error | null) {
  const ended: (OutcomeReport | undefined)[] = [];
  const hold: SlotHold = {
    grant: {
      slotId: "s1",
      leaseDeadline: clock.now() + 30_000,
      requestDeadline: clock.now() + 60_000,
      termMs: 30_000,
      renewIntervalMs: 10_000,
      remainingSlots: 0,
      effectiveLimit: 1,
      queuedMs: 0,
    },
    get signal(): AbortSignal {
      throw new Error("the proxy must not make the hold's AbortSignal");
    },
    onAbort(listener) {
      if (reason) listener(reason);
      return () => {};
    },
    end(outcome) {
      ended.push(outcome);
    },
  };
  return { hold, ended };
}

describe("forwardInSlot", () => {
  const client = createUpstreamClient();
  afterAll(() => client.destroy());

  const call = {
    // Nothing listens there; the exchange must end before it even tries.
    origin: parseOrigin("http://127.0.0.1:9"),
    method: "GET",
    pathAndQuery: "/",
    headers: {},
    body: null,
    client,
  };

  it("a hold aborted before the exchange starts ends it at once, with no timer or watcher left", async () => {
    const clock = new ManualClock();
    const { hold, ended } = holdAbortedWith(clock, new Error("pool removed"));
    let watching = 0;
    const response = await forwardInSlot({
      hold,
      clock,
      credential: null,
      call,
      watchClient: () => {
        watching++;
        return () => watching--;
      },
    });
    expect(response.status).toBe(499);
    expect(ended).toEqual([undefined]);
    expect(clock.pendingTimers).toBe(0);
    expect(watching).toBe(0);
  });

  it("a client gone before the exchange starts ends it at once, with no timer left", async () => {
    const clock = new ManualClock();
    const { hold, ended } = holdAbortedWith(clock, null);
    const response = await forwardInSlot({
      hold,
      clock,
      credential: null,
      call,
      watchClient: (listener) => {
        listener(new Error("client gone"));
        return () => {};
      },
    });
    expect(response.status).toBe(499);
    expect(ended).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
  });
});
