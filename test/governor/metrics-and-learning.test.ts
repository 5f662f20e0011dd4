import { describe, expect, it } from "vitest";
import { AbortedError, QueueTimeoutError, RejectedError } from "../../src/errors.js";
import { MAX_PAUSE_MS } from "../../src/learning/learner.js";
import type { HeadersLike } from "../../src/learning/types.js";
import { manualGovernor, outcomeOf, track } from "./helpers.js";

const ALL_TIME: [number, number] = [0, Number.POSITIVE_INFINITY];

describe("per-minute metrics recorded by the governor", () => {
  it("counts requests, admitted, queued, rejected, timed out, throttled, queue wait and hold time", async () => {
    const { governor, clock } = manualGovernor(1_700_000_095_000);
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 1, timeoutMs: 10_000 } });
    const first = await governor.acquire("llm"); // admitted at once
    const waiter = governor.acquire("llm", { waitMs: 10_000 }); // queued
    await expect(governor.acquire("llm", { waitMs: 10_000 })).rejects.toBeInstanceOf(RejectedError);
    await clock.advance(4000);
    await governor.release("llm", first.slotId, { status: 429, throttled: 2 });
    const second = await waiter; // admitted after 4 s in the queue
    const timingOut = governor.acquire("llm", { waitMs: 3000 }); // queued, then times out
    await clock.advance(3000);
    await expect(timingOut).rejects.toBeInstanceOf(QueueTimeoutError);
    await governor.release("llm", second.slotId);
    expect(governor.metrics.totals("llm", ...ALL_TIME)).toEqual({
      requests: 4,
      admitted: 2,
      queued: 2,
      rejected: 1,
      timedOut: 1,
      throttled: 2,
      released: 2,
      queueWaitMs: 4000,
      holdMs: 4000 + 3000,
    });
    // The clock started 5 s before a minute boundary: the timeout and last release fall after it.
    const buckets = governor.metrics.buckets("llm", ...ALL_TIME);
    expect(buckets.map((bucket) => bucket.start)).toEqual([1_700_000_040_000, 1_700_000_100_000]);
    expect(buckets[0]).toMatchObject({ requests: 4, rejected: 1, timedOut: 0, released: 1 });
    expect(buckets[1]).toMatchObject({ requests: 0, timedOut: 1, released: 1, holdMs: 3000 });
  });
});

describe("run() and aborts", () => {
  it("an aborted queued run leaves the queue at once and its function never runs", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 1, queue: { size: 5, timeoutMs: 60_000 } });
    const held = await governor.acquire("llm");
    const controller = new AbortController();
    let ran = false;
    const queued = governor.run(
      "llm",
      () => {
        ran = true;
      },
      { waitMs: 60_000, signal: controller.signal },
    );
    const next = track(governor.run("llm", () => "next", { waitMs: 60_000 }));
    expect((await governor.status("llm")).queued).toBe(2);
    controller.abort();
    await expect(queued).rejects.toBeInstanceOf(AbortedError);
    expect((await governor.status("llm")).queued).toBe(1);
    await governor.release("llm", held.slotId);
    await expect(next.promise).resolves.toBe("next");
    expect(ran).toBe(false);
    expect((await governor.status("llm")).held).toBe(0);
  });

  it("runs queued functions in FIFO order, one slot each, and releases after each", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", { maxConcurrent: 2, queue: { size: 100, timeoutMs: 60_000 } });
    const order: number[] = [];
    let running = 0;
    let peak = 0;
    const runs = Array.from({ length: 20 }, (_, index) =>
      governor.run(
        "llm",
        async () => {
          running++;
          peak = Math.max(peak, running);
          order.push(index);
          await Promise.resolve();
          running--;
          return index;
        },
        { waitMs: 60_000 },
      ),
    );
    await expect(Promise.all(runs)).resolves.toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(peak).toBe(2);
    expect((await governor.status("llm")).held).toBe(0);
  });

  it("runs synchronous functions too, releasing before the result is delivered", async () => {
    const { governor } = manualGovernor();
    await governor.definePool("llm", {
      maxConcurrent: 1,
      queue: { size: 1000, timeoutMs: 60_000 },
    });
    const runs = Array.from({ length: 1000 }, (_, index) =>
      governor.run("llm", () => index, { waitMs: 60_000 }),
    );
    const results = await Promise.all(runs);
    expect(results[999]).toBe(999);
    expect((await governor.status("llm")).held).toBe(0);
  });
});

describe("learning through the governor, one dialect at a time", () => {
  const NOW = 1_700_000_000_000;
  // A Retry-After pauses only on a throttle (on a success it is about that one resource).
  const cases: {
    name: string;
    status?: number;
    headers: HeadersLike;
    rpm: number | null;
    pausedFor: number;
  }[] = [
    {
      name: "Retry-After seconds",
      status: 429,
      headers: { "Retry-After": "7" },
      rpm: null,
      pausedFor: 7000,
    },
    {
      name: "Retry-After HTTP-date",
      status: 429,
      headers: { "retry-after": new Date(NOW + 9000).toUTCString() },
      rpm: null,
      pausedFor: 9000,
    },
    {
      name: "retry-after-ms",
      status: 429,
      headers: { "retry-after-ms": "1500" },
      rpm: null,
      pausedFor: 1500,
    },
    {
      name: "Retry-After on a 202 (poll later)",
      headers: { "Retry-After": "7" },
      status: 202,
      rpm: null,
      pausedFor: 0,
    },
    {
      name: "OpenAI, requests exhausted (6m0s reset, a pause cut to 5 minutes)",
      headers: {
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "6m0s",
        "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-remaining-tokens": "100",
        "x-ratelimit-reset-tokens": "12ms",
      },
      rpm: 500,
      pausedFor: MAX_PAUSE_MS,
    },
    {
      name: "Anthropic, tokens exhausted (RFC 3339 reset)",
      headers: {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "10",
        "anthropic-ratelimit-requests-reset": new Date(NOW + 20_000).toISOString(),
        "anthropic-ratelimit-tokens-limit": "40000",
        "anthropic-ratelimit-tokens-remaining": "0",
        "anthropic-ratelimit-tokens-reset": new Date(NOW + 12_000).toISOString(),
      },
      rpm: 50,
      pausedFor: 12_000,
    },
    {
      name: "IETF RateLimit + RateLimit-Policy",
      headers: { "RateLimit-Policy": '"burst";q=100;w=60', RateLimit: '"burst";r=0;t=30' },
      rpm: 100,
      pausedFor: 30_000,
    },
    {
      name: "IETF default policy with room left",
      headers: { "RateLimit-Policy": '"default";q=100;w=30', RateLimit: '"default";r=50;t=30' },
      rpm: 200,
      pausedFor: 0,
    },
    {
      name: "older RateLimit-Limit/Remaining/Reset",
      headers: { "RateLimit-Limit": "60", "RateLimit-Remaining": "0", "RateLimit-Reset": "5" },
      rpm: 60,
      pausedFor: 5000,
    },
    {
      name: "GitHub epoch-second reset, remaining from used",
      headers: {
        "x-ratelimit-limit": "30",
        "x-ratelimit-used": "30",
        "x-ratelimit-reset": String(NOW / 1000 + 42),
        "x-ratelimit-resource": "search",
      },
      rpm: 30,
      pausedFor: 42_000,
    },
  ];

  for (const { name, status = 200, headers, rpm, pausedFor } of cases) {
    it(`${name}: learned values are visible in status() and reset by resetLearned()`, async () => {
      const { governor } = manualGovernor(NOW);
      await governor.definePool("llm", { maxConcurrent: 4 });
      const grant = await governor.acquire("llm");
      await governor.release("llm", grant.slotId, { status, headers });
      const { learned } = await governor.status("llm");
      expect(learned.rpm).toBe(rpm);
      expect(learned.pausedUntil).toBe(pausedFor === 0 ? 0 : NOW + pausedFor);
      if (pausedFor > 0) {
        const refused = await outcomeOf(governor.acquire("llm"));
        expect((refused as { error: RejectedError }).error.retryAfterMs).toBe(pausedFor);
      }
      await governor.resetLearned("llm");
      expect((await governor.status("llm")).learned).toEqual({
        concurrency: null,
        rpm: null,
        pausedUntil: 0,
      });
      await expect(governor.acquire("llm")).resolves.toBeTruthy();
    });
  }

  it("counts an absurd throttled count from an unvalidated report as one throttle", async () => {
    const { governor } = manualGovernor(NOW);
    await governor.definePool("llm", { maxConcurrent: 4 });
    for (const throttled of [1e300, 2.5, Number.POSITIVE_INFINITY, 3]) {
      const grant = await governor.acquire("llm");
      await governor.release("llm", grant.slotId, { status: 429, throttled });
    }
    expect(governor.metrics.totals("llm", 0, Number.POSITIVE_INFINITY).throttled).toBe(
      1 + 1 + 1 + 3,
    );
  });

  it("lets the rate object win over headers for the same field", async () => {
    const { governor } = manualGovernor(NOW);
    await governor.definePool("llm", { maxConcurrent: 4 });
    const grant = await governor.acquire("llm");
    await governor.release("llm", grant.slotId, {
      status: 200,
      rate: { limit: 10 },
      headers: { "x-ratelimit-limit-requests": "500" },
    });
    expect((await governor.status("llm")).learned.rpm).toBe(10);
  });
});

describe("adaptive limit: one decrease per throttle episode", () => {
  it("ignores throttles of slots granted in the millisecond of the decrease (no clock tick between)", async () => {
    const { governor } = manualGovernor(1_000);
    await governor.definePool("llm", { maxConcurrent: 8 });
    const grants = [];
    for (let i = 0; i < 6; i++) grants.push(await governor.acquire("llm"));
    const limits = [];
    // Newest first, then the first grant (held alone when granted: it would cut to 1).
    for (const grant of [grants[5]!, grants[4]!, grants[0]!]) {
      await governor.release("llm", grant.slotId, { status: 429 });
      limits.push((await governor.status("llm")).learned.concurrency);
    }
    expect(limits).toEqual([5, 5, 5]);
  });
});
