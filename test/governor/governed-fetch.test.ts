import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { RejectedError } from "../../src/errors.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";
import { manualGovernor, outcomeOf } from "./helpers.js";

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A real local HTTP upstream; each test sets how it answers and can count what reached it. */
async function upstream(handler: Handler): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((request, response) => {
    hits++;
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, hits: () => hits };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("governed fetch", () => {
  it("holds the slot until the body is read, then releases it", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 1 });
    const { url } = await upstream((_request, response) => response.end("hello"));
    const response = await governor.fetch("api", url);
    expect((await governor.status("api")).held).toBe(1);
    expect(await response.text()).toBe("hello");
    expect((await governor.status("api")).held).toBe(0);
    expect(governor.metrics.totals("api", 0, Number.POSITIVE_INFINITY)).toMatchObject({
      requests: 1,
      admitted: 1,
      released: 1,
    });
  });

  it("takes a RequestInit as fetch does, a null signal included (type-checked by tsc)", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 1 });
    const { url } = await upstream((request, response) => response.end(request.method));
    // A wrapper around fetch passes its RequestInit on: `signal` there may be null.
    const init: RequestInit = { method: "POST", body: "x", signal: null };
    const response = await governor.fetch("api", url, { ...init, waitMs: 1_000 });
    expect(await response.text()).toBe("POST");
    const grant = await governor.acquire("api", { signal: init.signal });
    await governor.release("api", grant.slotId);
    expect(await governor.run("api", () => "ran", { signal: null })).toBe("ran");
    expect((await governor.status("api")).held).toBe(0);
  });

  it("keeps the url, redirected and type of the response it followed a redirect to", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 1 });
    const { url } = await upstream((request, response) => {
      if (request.url === "/") response.writeHead(302, { location: "/moved" }).end();
      else response.end("here");
    });
    const response = await governor.fetch("api", url);
    expect(response).toMatchObject({ url: `${url}moved`, redirected: true, type: "basic" });
    expect(await response.text()).toBe("here");
  });

  it("learns a Retry-After pause from a 429 by itself", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 4 });
    const { url } = await upstream((_request, response) => {
      response.writeHead(429, { "retry-after": "2" });
      response.end("slow down");
    });
    const response = await governor.fetch("api", url);
    expect(response.status).toBe(429);
    await response.text();
    expect((await governor.status("api")).learned.pausedUntil).toBe(clock.now() + 2000);
    const refused = await outcomeOf(governor.acquire("api"));
    expect((refused as { error: RejectedError }).error).toMatchObject({
      reason: "paused",
      retryAfterMs: 2000,
    });
    expect(governor.metrics.totals("api", 0, Number.POSITIVE_INFINITY).throttled).toBe(1);
  });

  it("learns a 429 and frees its slot as soon as it arrives, body read or not", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 1 });
    const { url } = await upstream((_request, response) => {
      response.writeHead(429, { "retry-after": "10" });
      response.end('{"error":"slow down"}');
    });
    const response = await governor.fetch("api", url);
    // Nothing read yet (the `if (res.status === 429) retry()` pattern): already learned.
    const status = await governor.status("api");
    expect(status.held).toBe(0);
    expect(status.learned.pausedUntil).toBe(clock.now() + 10_000);
    // The body is still there for whoever wants it.
    expect(await response.json()).toEqual({ error: "slow down" });
  });

  it("streams a 429 body too large to read first, and releases at its end", async () => {
    const { governor, clock } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 1 });
    const big = "x".repeat(200 * 1024);
    const { url } = await upstream((_request, response) => {
      response.writeHead(429, { "retry-after": "1" });
      response.end(big);
    });
    const response = await governor.fetch("api", url);
    // Learned already; the slot is released when the body ends.
    const before = await governor.status("api");
    expect(before).toMatchObject({ held: 1, learned: { pausedUntil: clock.now() + 1000 } });
    expect(await response.text()).toBe(big);
    expect((await governor.status("api")).held).toBe(0);
    // Learned once: one throttle counted, not two.
    expect(governor.metrics.totals("api", 0, Number.POSITIVE_INFINITY).throttled).toBe(1);
  });

  it("hands over a 429 whose body does not end within a second, streaming from its first byte", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 1 });
    const { url } = await upstream((_request, response) => {
      response.writeHead(429, { "retry-after": "1" });
      response.write("first");
      // ... and nothing more: the body never ends on its own.
    });
    const response = await governor.fetch("api", url);
    expect((await governor.status("api")).held).toBe(1);
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("first");
    await reader.cancel();
    expect((await governor.status("api")).held).toBe(0);
  });

  it("learns the RPM an OpenAI-style upstream reports", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 4 });
    const { url } = await upstream((_request, response) => {
      response.writeHead(200, {
        "x-ratelimit-limit-requests": "2",
        "x-ratelimit-remaining-requests": "1",
        "x-ratelimit-reset-requests": "30s",
      });
      response.end("{}");
    });
    await (await governor.fetch("api", url)).text();
    expect((await governor.status("api")).learned.rpm).toBe(2);
    await governor.acquire("api");
    const refused = await outcomeOf(governor.acquire("api"));
    expect((refused as { error: RejectedError }).error.reason).toBe("rpm");
  });

  it("releases the slot when the request fails, and rethrows", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 1 });
    const { url } = await upstream((request) => request.socket.destroy());
    await expect(governor.fetch("api", url)).rejects.toThrow();
    expect((await governor.status("api")).held).toBe(0);
  });

  it("turns a call away before it reaches the upstream when the pool is full", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 1 });
    const { url, hits } = await upstream((_request, response) => response.end("ok"));
    await governor.acquire("api");
    await expect(governor.fetch("api", url)).rejects.toBeInstanceOf(RejectedError);
    expect(hits()).toBe(0);
  });

  it("releases the slot when the caller cancels the body", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 1 });
    const { url } = await upstream((_request, response) => {
      response.write("first chunk");
      // Never ends: only the caller's cancel can free the slot.
    });
    const response = await governor.fetch("api", url);
    expect((await governor.status("api")).held).toBe(1);
    await response.body?.cancel();
    expect((await governor.status("api")).held).toBe(0);
  });

  it("frees a body nobody reads at the request deadline, and stops renewing its lease", async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const store = new MemorySlotStore({ clock });
    let renews = 0;
    const renew = store.renew.bind(store);
    store.renew = (pool, slotId) => {
      renews++;
      return renew(pool, slotId);
    };
    const governor = createGovernor({ clock, store });
    await governor.definePool("api", { maxConcurrent: 1, termMs: 1000, requestTimeoutMs: 3000 });
    const { url } = await upstream((_request, response) => {
      response.writeHead(200);
      response.write("the start of a long answer");
      // Never ends, and the caller never reads it.
    });
    const response = await governor.fetch("api", url);
    expect(response.status).toBe(200);
    for (let step = 0; step < 6; step++) await clock.advance(500);
    expect((await governor.status("api")).held).toBe(0);
    const renewsAtDeadline = renews;
    for (let step = 0; step < 10; step++) await clock.advance(500);
    expect(renews).toBe(renewsAtDeadline);
  });

  it("honours the signal of a Request given as input, while queued and while fetching", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("api", { maxConcurrent: 1, queue: { size: 5, timeoutMs: 60_000 } });
    const { url, hits } = await upstream(() => {
      // Never answers: only the Request's signal ends the exchange.
    });
    const fetching = new AbortController();
    const first = outcomeOf(governor.fetch("api", new Request(url, { signal: fetching.signal })));
    while (hits() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const queuedAbort = new AbortController();
    const queued = outcomeOf(
      governor.fetch("api", new Request(url, { signal: queuedAbort.signal }), { waitMs: 60_000 }),
    );
    expect((await governor.status("api")).queued).toBe(1);
    queuedAbort.abort(new Error("gave up waiting"));
    expect((await queued).ok).toBe(false);
    fetching.abort(new Error("gave up fetching"));
    expect((await first).ok).toBe(false);
    expect(await governor.status("api")).toMatchObject({ held: 0, queued: 0 });
    expect(hits()).toBe(1);
  });
});
