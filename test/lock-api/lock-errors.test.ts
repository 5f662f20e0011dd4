import { connect } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import { rawExchange } from "../server/http-client.js";
import { createHarness, type Harness, readBody, waitFor } from "./harness.js";

async function expectError(response: Response, status: number, error: string): Promise<void> {
  expect(response.status).toBe(status);
  const body = await readBody(response);
  expect(body.error).toBe(error);
  expect(typeof body.message).toBe("string");
  expect(body.message.length).toBeGreaterThan(0);
}

/** A POST whose head announces 100 body bytes, of which only `{"w` ever arrive. */
function truncatedPost(path: string, key: string): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Svc-Key: ${key}\r\n` +
    'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"w'
  );
}

/** The status line and JSON body of a raw HTTP/1.1 answer. */
function parseRaw(answer: string): { head: string; body: Record<string, unknown> } {
  const split = answer.indexOf("\r\n\r\n");
  return { head: answer.slice(0, split), body: JSON.parse(answer.slice(split + 4)) };
}

/** One test per row of the contract's Lock API error tables (section 7). */
describe("Lock API errors (contract section 7)", () => {
  let h: Harness;
  let clock: ManualClock;
  let key: string;
  let allowlisted = true;

  beforeEach(async () => {
    allowlisted = true;
    h = await createHarness({ ipPolicy: () => allowlisted });
    clock = h.manualClock as ManualClock;
    await h.addPool({ subdomain: "llm", maxConcurrent: 1, queueSize: 1, queueTimeoutMs: 10_000 });
    key = (await h.mintKey("llm")).plaintext;
  });
  afterEach(async () => h.close());

  describe("acquire", () => {
    it("401 unauthorized for missing or invalid auth", async () => {
      await expectError(await h.lockPost("/pools/llm/lock/acquire"), 401, "unauthorized");
      const badKey = await h.lockPost("/pools/llm/lock/acquire", { key: "slc_key_not-a-real-key" });
      // A caller without a valid key learns nothing about the pool.
      expect(badKey.headers.get("x-svc-effective-limit")).toBeNull();
      expect(badKey.headers.get("x-svc-remaining-slots")).toBeNull();
      await expectError(badKey, 401, "unauthorized");
      expect(await h.accessLog.list("llm")).toEqual([]);
    });

    it("403 unauthorized on an IP allowlist miss", async () => {
      allowlisted = false;
      await expectError(await h.lockPost("/pools/llm/lock/acquire", { key }), 403, "unauthorized");
      expect((await h.governor.status("llm")).held).toBe(0);
    });

    it("413 payload_too_large for a body over 16 KiB", async () => {
      const body = JSON.stringify({ waitMs: 1, padding: "x".repeat(17 * 1024) });
      await expectError(
        await h.lockPost("/pools/llm/lock/acquire", { key, body }),
        413,
        "payload_too_large",
      );
      expect((await h.governor.status("llm")).held).toBe(0);
    });

    it("413 payload_too_large for a chunked body (no Content-Length) that grows past the limit", async () => {
      const chunk = new TextEncoder().encode(" ".repeat(4 * 1024));
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          // Far more than the limit, if the server kept reading.
          if (sent++ < 1_000) controller.enqueue(chunk);
          else controller.close();
        },
      });
      const response = await fetch(`${h.lock.url}/pools/llm/lock/acquire`, {
        method: "POST",
        headers: { "x-svc-key": key },
        body,
        duplex: "half",
      } as RequestInit);
      await expectError(response, 413, "payload_too_large");
      expect((await h.governor.status("llm")).held).toBe(0);
    });

    it("408 request_timeout for a body that stops short, and the connection closes", async () => {
      await h.close();
      h = await createHarness({ bodyTimeoutMs: 150 });
      await h.addPool({ subdomain: "llm", maxConcurrent: 1 });
      const slowKey = (await h.mintKey("llm")).plaintext;
      // rawExchange resolves when the server closes the connection.
      const answer = parseRaw(
        await rawExchange(h.lock.port, truncatedPost("/pools/llm/lock/acquire", slowKey)),
      );
      expect(answer.head).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer.head.toLowerCase()).toContain("connection: close");
      expect(answer.body).toEqual({ error: "request_timeout", message: expect.any(String) });
      expect((await h.governor.status("llm")).held).toBe(0);

      // A release whose report never arrives still releases.
      const grant = await readBody(await h.lockPost("/pools/llm/lock/acquire", { key: slowKey }));
      const released = parseRaw(
        await rawExchange(
          h.lock.port,
          truncatedPost(`/pools/llm/lock/${grant.slotId}/release`, slowKey),
        ),
      );
      expect(released.head).toMatch(/^HTTP\/1\.1 408 /);
      expect(released.body).toMatchObject({ error: "request_timeout", released: true });
      expect((await h.governor.status("llm")).held).toBe(0);
    });

    it("a client that hangs up mid-body is no server error (nothing logged, no slot taken)", async () => {
      const socket = connect(h.lock.port, "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.write(
        `POST /pools/llm/lock/acquire HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Svc-Key: ${key}\r\n` +
          'Content-Length: 50\r\n\r\n{"wa',
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(h.loggedErrors).toEqual([]);
      expect((await h.governor.status("llm")).held).toBe(0);
    });

    it("429 too_many_requests with Retry-After (whole seconds, rounded up) when no slot is free", async () => {
      await h.lockPost("/pools/llm/lock/acquire", { key });
      const response = await h.lockPost("/pools/llm/lock/acquire", { key });
      expect(response.headers.get("retry-after")).toBe("1");
      expect(response.headers.get("x-svc-rejected-by")).toBe("sluice");
      // The governor headers come on the refusal too: a client sizes its concurrency from them.
      expect(response.headers.get("x-svc-effective-limit")).toBe("1");
      expect(response.headers.get("x-svc-remaining-slots")).toBe("0");
      await expectError(response, 429, "too_many_requests");
    });

    it("504 queue_timeout when waitMs (or the header budget) passes with no slot", async () => {
      await h.lockPost("/pools/llm/lock/acquire", { key });
      const waiting = h.lockPost("/pools/llm/lock/acquire", {
        key,
        headers: { "x-svc-queue-timeout-ms": "3000" },
      });
      await waitFor(async () => (await h.governor.status("llm")).queued === 1);
      await clock.advance(3_000);
      const timedOut = await waiting;
      expect(timedOut.headers.get("x-svc-effective-limit")).toBe("1");
      expect(timedOut.headers.get("x-svc-remaining-slots")).toBe("0");
      await expectError(timedOut, 504, "queue_timeout");
      // An expected answer, not a server fault: nothing is logged (no stack per timeout).
      expect(h.loggedErrors).toEqual([]);
    });
  });

  describe("renew", () => {
    it("404 not_found when the slot was already released or reclaimed", async () => {
      const grant = await readBody(await h.lockPost("/pools/llm/lock/acquire", { key }));
      await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, { key });
      await expectError(
        await h.lockPost(`/pools/llm/lock/${grant.slotId}/renew`, { key }),
        404,
        "not_found",
      );
    });

    it("409 capped when the slot hit the request-timeout cap", async () => {
      await h.addPool({
        subdomain: "short",
        maxConcurrent: 1,
        termMs: 10_000,
        requestTimeoutMs: 10_000,
      });
      const shortKey = (await h.mintKey("short")).plaintext;
      const grant = await readBody(
        await h.lockPost("/pools/short/lock/acquire", { key: shortKey }),
      );
      expect(grant.leaseDeadline).toBe(grant.requestDeadline);
      await clock.advance(5_000);
      await expectError(
        await h.lockPost(`/pools/short/lock/${grant.slotId}/renew`, { key: shortKey }),
        409,
        "capped",
      );
    });
  });

  describe("release", () => {
    it("a slot of a pool the governor dropped before the catalog gives 200 with released false", async () => {
      const grant = await readBody(await h.lockPost("/pools/llm/lock/acquire", { key }));
      await h.governor.removePool("llm");
      const response = await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, { key });
      expect(response.status).toBe(200);
      expect(await readBody(response)).toEqual({ released: false });
    });

    it("a slot of a pool deleted from the catalog gives 401 like any unknown pool (its keys went with it)", async () => {
      const grant = await readBody(await h.lockPost("/pools/llm/lock/acquire", { key }));
      const pool = (await h.catalog.store.findPoolBySubdomain("llm"))!;
      expect(await h.catalog.store.deletePool(h.team.id, pool.id)).toBe(true);
      await h.governor.removePool("llm");
      await new Promise((resolve) => setTimeout(resolve, 5));
      await expectError(
        await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, { key }),
        401,
        "unauthorized",
      );
    });

    it("a missing slot gives 200 with released false", async () => {
      const response = await h.lockPost(
        "/pools/llm/lock/00000000-0000-4000-8000-000000000000/release",
        {
          key,
        },
      );
      expect(response.status).toBe(200);
      expect(await readBody(response)).toEqual({ released: false });
    });
  });

  describe("while the server stops", () => {
    it("503 shutting_down with Retry-After for queued and new acquires once the governor drains", async () => {
      await h.lockPost("/pools/llm/lock/acquire", { key });
      const queued = h.lockPost("/pools/llm/lock/acquire", { key, body: '{"waitMs":5000}' });
      await waitFor(async () => (await h.governor.status("llm")).queued === 1);
      await clock.advance(40);
      h.governor.drain();
      for (const response of [await queued, await h.lockPost("/pools/llm/lock/acquire", { key })]) {
        expect(response.headers.get("retry-after")).toBe("1");
        await expectError(response, 503, "shutting_down");
      }
      // Both turned-away attempts are in the access log (newest first), the queued one with
      // the time it waited.
      const outcomes = (await h.accessLog.list("llm")).map((entry) => entry.outcome);
      expect(outcomes).toEqual(["unavailable", "unavailable", "admitted"]);
      expect((await h.accessLog.list("llm"))[1]!.queuedMs).toBe(40);
    });
  });
});
