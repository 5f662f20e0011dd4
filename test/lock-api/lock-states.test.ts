import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import { startPoolRequest } from "../proxy/client.js";
import { createHarness, type Harness, readBody, waitFor } from "./harness.js";

/** One test per row of the contract's lock slot state table (section 3). */
describe("Lock API slot states (contract section 3)", () => {
  let h: Harness;
  let clock: ManualClock;
  let key: string;

  beforeEach(async () => {
    h = await createHarness();
    clock = h.manualClock as ManualClock;
    await h.addPool({
      subdomain: "llm",
      maxConcurrent: 1,
      queueSize: 2,
      queueTimeoutMs: 10_000,
      termMs: 30_000,
      renewIntervalMs: 10_000,
      requestTimeoutMs: 60_000,
    });
    key = (await h.mintKey("llm")).plaintext;
  });
  afterEach(async () => h.close());

  const acquire = (body?: unknown, headers?: Record<string, string>) =>
    h.lockPost("/pools/llm/lock/acquire", {
      key,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const renew = (slotId: string) => h.lockPost(`/pools/llm/lock/${slotId}/renew`, { key });
  const release = (slotId: string, body?: unknown) =>
    h.lockPost(`/pools/llm/lock/${slotId}/release`, {
      key,
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it("none → held when a slot is free: the lock grant is returned and the attempt logged", async () => {
    const response = await acquire();
    expect(response.status).toBe(200);
    const grant = await readBody(response);
    expect(Object.keys(grant).sort()).toEqual(
      ["leaseDeadline", "renewIntervalMs", "requestDeadline", "slotId", "termMs"].sort(),
    );
    expect(grant.termMs).toBe(30_000);
    expect(grant.renewIntervalMs).toBe(10_000);
    expect(grant.leaseDeadline).toBe(clock.now() + 30_000);
    expect(grant.requestDeadline).toBe(clock.now() + 60_000);
    expect(response.headers.get("x-svc-remaining-slots")).toBe("0");
    expect(response.headers.get("x-svc-effective-limit")).toBe("1");
    expect(response.headers.get("x-svc-queued-ms")).toBe("0");
    expect((await h.governor.status("llm")).held).toBe(1);
    const log = await h.accessLog.list("llm");
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ outcome: "admitted", source: "lock", queuedMs: 0, pool: "llm" });
  });

  it("none → held when a slot opens within the wait budget (queued, then granted)", async () => {
    const first = await readBody(await acquire());
    const waiting = acquire({ waitMs: 5_000 });
    await waitFor(async () => (await h.governor.status("llm")).queued === 1);
    await clock.advance(1_500);
    expect((await release(first.slotId)).status).toBe(200);
    const response = await waiting;
    expect(response.status).toBe(200);
    expect(response.headers.get("x-svc-queued-ms")).toBe("1500");
    const log = await h.accessLog.list("llm");
    expect(log[0]).toMatchObject({ outcome: "queued", queuedMs: 1_500 });
  });

  it("none → none with 429 when no slot is free and the caller fails fast", async () => {
    await acquire();
    const response = await acquire();
    expect(response.status).toBe(429);
    expect(await readBody(response)).toMatchObject({ error: "too_many_requests" });
    expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await h.governor.status("llm")).held).toBe(1);
  });

  it("none → none with 429 when the queue is full", async () => {
    await acquire();
    const waiters = [acquire({ waitMs: 5_000 }), acquire({ waitMs: 5_000 })];
    await waitFor(async () => (await h.governor.status("llm")).queued === 2);
    const response = await acquire({ waitMs: 5_000 });
    expect(response.status).toBe(429);
    expect(await readBody(response)).toMatchObject({ error: "too_many_requests" });
    expect((await h.accessLog.list("llm"))[0]).toMatchObject({
      outcome: "rejected",
      reason: "queue_full",
    });
    await clock.advance(5_000);
    expect((await Promise.all(waiters)).map((r) => r.status)).toEqual([504, 504]);
  });

  it("none → none with 504 after waiting the whole wait budget", async () => {
    await acquire();
    const waiting = acquire({ waitMs: 2_000 });
    await waitFor(async () => (await h.governor.status("llm")).queued === 1);
    await clock.advance(2_000);
    const response = await waiting;
    expect(response.status).toBe(504);
    expect(await readBody(response)).toMatchObject({ error: "queue_timeout" });
    expect((await h.accessLog.list("llm"))[0]).toMatchObject({
      outcome: "timed_out",
      queuedMs: 2_000,
    });
  });

  it("none → none when the client goes away while queued: it leaves the queue at once", async () => {
    const held = await readBody(await acquire());
    const { request } = startPoolRequest(h.lock.port, {
      host: "lock.test",
      method: "POST",
      path: "/pools/llm/lock/acquire",
      headers: { "x-svc-key": key, "content-type": "application/json" },
      body: JSON.stringify({ waitMs: 5_000 }),
    });
    await waitFor(async () => (await h.governor.status("llm")).queued === 1);
    request.destroy();
    await waitFor(async () => (await h.governor.status("llm")).queued === 0);
    // The slot freed next goes to nobody: the caller who left is not granted it.
    expect((await release(held.slotId)).status).toBe(200);
    expect((await h.governor.status("llm")).held).toBe(0);
    await waitFor(async () => (await h.accessLog.list("llm"))[0]?.outcome === "aborted");
  });

  it("held → held on renew: leaseDeadline extends, never past requestDeadline", async () => {
    const grant = await readBody(await acquire());
    await clock.advance(10_000);
    const renewed = await renew(grant.slotId);
    expect(renewed.status).toBe(200);
    expect(await readBody(renewed)).toEqual({ leaseDeadline: clock.now() + 30_000 });
    await clock.advance(25_000);
    // now = start + 35 s: a full term would reach start + 65 s, past the 60 s request deadline.
    const atCap = await renew(grant.slotId);
    expect(atCap.status).toBe(200);
    expect(await readBody(atCap)).toEqual({ leaseDeadline: grant.requestDeadline });
  });

  it("held → held (capped) with 409 once the slot reached its request-timeout cap", async () => {
    const grant = await readBody(await acquire());
    await clock.advance(20_000);
    await renew(grant.slotId);
    await clock.advance(20_000);
    // The lease now ends at the request deadline (60 s); a renewal before then is capped.
    expect(await readBody(await renew(grant.slotId))).toEqual({
      leaseDeadline: grant.requestDeadline,
    });
    await clock.advance(10_000);
    const response = await renew(grant.slotId);
    expect(response.status).toBe(409);
    expect(await readBody(response)).toMatchObject({ error: "capped" });
  });

  it("held → released on release; the outcome report feeds learning", async () => {
    const grant = await readBody(await acquire());
    const response = await release(grant.slotId, { status: 429, retryAfterMs: 5_000 });
    expect(response.status).toBe(200);
    expect(await readBody(response)).toEqual({ released: true });
    const status = await h.governor.status("llm");
    expect(status.held).toBe(0);
    expect(status.learned.pausedUntil).toBe(clock.now() + 5_000);
  });

  it("held → reclaimed when not renewed within one term: the slot is free again", async () => {
    const grant = await readBody(await acquire());
    await clock.advance(29_999);
    expect((await acquire()).status).toBe(429);
    await clock.advance(1);
    expect((await h.governor.status("llm")).held).toBe(0);
    const next = await acquire();
    expect(next.status).toBe(200);
    expect((await readBody(next)).slotId).not.toBe(grant.slotId);
  });

  it("released or reclaimed → renew answers 404 not_found", async () => {
    const released = await readBody(await acquire());
    await release(released.slotId);
    const afterRelease = await renew(released.slotId);
    expect(afterRelease.status).toBe(404);
    expect(await readBody(afterRelease)).toMatchObject({ error: "not_found" });

    const reclaimed = await readBody(await acquire());
    await clock.advance(30_000);
    const afterReclaim = await renew(reclaimed.slotId);
    expect(afterReclaim.status).toBe(404);
    expect(await readBody(afterReclaim)).toMatchObject({ error: "not_found" });
  });

  it("released or reclaimed → release answers 200 with released false (idempotent)", async () => {
    const released = await readBody(await acquire());
    expect(await readBody(await release(released.slotId))).toEqual({ released: true });
    const again = await release(released.slotId);
    expect(again.status).toBe(200);
    expect(await readBody(again)).toEqual({ released: false });

    const reclaimed = await readBody(await acquire());
    await clock.advance(30_000);
    const late = await release(reclaimed.slotId);
    expect(late.status).toBe(200);
    expect(await readBody(late)).toEqual({ released: false });
  });
});
