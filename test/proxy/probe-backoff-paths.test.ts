import { describe, expect, it } from "vitest";
import { PROBE_WAIT_BASE_MS, successesToProbe } from "../../src/learning/probe-backoff.js";
import { readBody } from "../lock-api/harness.js";
import { HOST, useForwardingFixture } from "./forwarding-fixture.js";

/** A concurrency throttle as LLM APIs answer it: 429 with room left in the request window. */
const CONCURRENCY_429 = {
  "retry-after-ms": "120",
  "x-ratelimit-limit-requests": "6000",
  "x-ratelimit-remaining-requests": "5900",
  "x-ratelimit-reset-requests": "1s",
};

describe("probe backoff through the Lock API and the proxy", () => {
  const fixture = useForwardingFixture();

  it("a Lock API release report of a concurrency 429 enters the backoff; the next probe waits for it", async () => {
    const { h, key } = fixture;
    const clock = h.manualClock!;
    const acquire = async () =>
      (await readBody(await h.lockPost("/pools/llm/lock/acquire", { key }))).slotId as string;
    const release = (slotId: string, report: object) =>
      h.lockPost(`/pools/llm/lock/${slotId}/release`, { key, body: JSON.stringify(report) });

    const first = await acquire();
    const second = await acquire(); // granted with 2 held: the congested level
    await clock.advance(5);
    await release(second, { status: 429, headers: CONCURRENCY_429 });
    await release(first, { status: 200 });
    expect((await h.governor.status("llm")).learner).toMatchObject({
      limit: 1,
      nextProbeLevel: 2,
      failedProbes: 1,
      nextProbeInMs: PROBE_WAIT_BASE_MS,
    });

    // Busy successes alone do not probe before the wait is over...
    for (let index = 0; index < successesToProbe(1, 1); index += 1) {
      await release(await acquire(), { status: 200 });
    }
    expect((await h.governor.status("llm")).effectiveLimit).toBe(1);
    // ...and the first one after it does.
    await clock.advance(PROBE_WAIT_BASE_MS);
    await release(await acquire(), { status: 200 });
    expect((await h.governor.status("llm")).effectiveLimit).toBe(2);
  });

  it("an upstream's concurrency 429 through the proxy enters the backoff", async () => {
    fixture.upstream.on("/base/busy", (_request, response) => {
      response.writeHead(429, { ...CONCURRENCY_429, "content-type": "text/plain" });
      response.end("too many at once");
    });
    const reply = await fixture.send({ host: HOST, path: "/busy" });
    expect(reply.status).toBe(429);
    const status = await fixture.h.governor.status("llm");
    // Not paused: a concurrency throttle lowers the limit instead.
    expect(status.learned.pausedUntil).toBe(0);
    expect(status.learner).toMatchObject({ limit: 1, nextProbeLevel: 2, failedProbes: 1 });
  });
});
