import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import { createHarness, type Harness, readBody, waitFor } from "./harness.js";

describe("Lock API request handling", () => {
  let h: Harness;
  let clock: ManualClock;
  let key: string;

  beforeEach(async () => {
    h = await createHarness();
    clock = h.manualClock as ManualClock;
    await h.addPool({ subdomain: "llm", maxConcurrent: 1, queueSize: 2, queueTimeoutMs: 10_000 });
    key = (await h.mintKey("llm")).plaintext;
  });
  afterEach(async () => h.close());

  const acquire = (init: { body?: string | Uint8Array; headers?: Record<string, string> } = {}) =>
    h.lockPost("/pools/llm/lock/acquire", { key, ...init });

  describe("wait budget", () => {
    it.each([
      ["negative", '{"waitMs":-1}'],
      ["fractional", '{"waitMs":1.5}'],
      ["string", '{"waitMs":"100"}'],
      ["boolean", '{"waitMs":true}'],
      ["infinite", '{"waitMs":1e400}'],
    ])("a %s waitMs in the body is 400 invalid_request", async (_what, body) => {
      const response = await acquire({ body });
      expect(response.status).toBe(400);
      expect(await readBody(response)).toMatchObject({ error: "invalid_request" });
    });

    it.each(["-1", "1.5", "soon", "1e3", ""])(
      "X-Svc-Queue-Timeout-Ms %j is 400 invalid_request",
      async (value) => {
        const response = await acquire({ headers: { "x-svc-queue-timeout-ms": value } });
        expect(response.status).toBe(400);
        expect(await readBody(response)).toMatchObject({ error: "invalid_request" });
      },
    );

    it.each([
      ["malformed JSON", "{waitMs: 1"],
      ["a JSON array", "[1]"],
    ])("%s is 400 invalid_request", async (_what, body) => {
      const response = await acquire({ body });
      expect(response.status).toBe(400);
      expect(await readBody(response)).toMatchObject({ error: "invalid_request" });
    });

    it("a body that is not UTF-8 is 400 invalid_request, as on the Control API", async () => {
      // {"waitMs":0,"\xff":1}: a lenient decode read the key as U+FFFD.
      const body = Uint8Array.from([...Buffer.from('{"waitMs":0,"'), 0xff, ...Buffer.from('":1}')]);
      const response = await acquire({ body });
      expect(response.status).toBe(400);
      expect(await readBody(response)).toEqual({
        error: "invalid_request",
        message: "The request body is not valid JSON.",
      });
      expect((await h.governor.status("llm")).held).toBe(0);
    });

    it("the body's waitMs wins over the header", async () => {
      await acquire();
      const waiting = acquire({
        body: '{"waitMs":1000}',
        headers: { "x-svc-queue-timeout-ms": "8000" },
      });
      await waitFor(async () => (await h.governor.status("llm")).queued === 1);
      await clock.advance(1_000);
      expect((await waiting).status).toBe(504);
    });

    it("a body's waitMs wins over a malformed header too (the header is not read)", async () => {
      const response = await acquire({
        body: '{"waitMs":0}',
        headers: { "x-svc-queue-timeout-ms": "abc" },
      });
      expect(response.status).toBe(200);
      // Without a body wait the same header is a 400.
      const alone = await acquire({ headers: { "x-svc-queue-timeout-ms": "abc" } });
      expect(alone.status).toBe(400);
    });

    it("the header sets the wait when the body has none", async () => {
      const first = await readBody(await acquire());
      const waiting = acquire({ headers: { "x-svc-queue-timeout-ms": "5000" } });
      await waitFor(async () => (await h.governor.status("llm")).queued === 1);
      await h.lockPost(`/pools/llm/lock/${first.slotId}/release`, { key });
      expect((await waiting).status).toBe(200);
    });

    it("X-Svc-No-Queue forces fail-fast even with waitMs", async () => {
      await acquire();
      const response = await acquire({
        body: '{"waitMs":5000}',
        headers: { "x-svc-no-queue": "1" },
      });
      expect(response.status).toBe(429);
      expect((await h.governor.status("llm")).queued).toBe(0);
    });

    it.each([
      ["a body waitMs", { body: '{"waitMs":60000}' }],
      ["a body waitMs past 2^53", { body: '{"waitMs":99999999999999999999}' }],
      ["a header past 2^53", { headers: { "x-svc-queue-timeout-ms": "9".repeat(400) } }],
    ])("%s is clamped to the pool's queue timeout", async (_what, init) => {
      await acquire();
      const waiting = acquire(init);
      await waitFor(async () => (await h.governor.status("llm")).queued === 1);
      await clock.advance(10_000);
      expect((await waiting).status).toBe(504);
    });
  });

  describe("authentication", () => {
    it("an expired key is refused", async () => {
      const expiring = (await h.mintKey("llm", { expiresPreset: "1h" })).plaintext;
      expect((await h.lockPost("/pools/llm/lock/acquire", { key: expiring })).status).toBe(200);
      await clock.advance(3_600_000);
      expect((await h.lockPost("/pools/llm/lock/acquire", { key: expiring })).status).toBe(401);
    });

    it("a revoked key is refused", async () => {
      const minted = await h.mintKey("llm");
      await h.catalog.revokePoolKey(h.team.id, "llm", minted.key.id);
      const response = await h.lockPost("/pools/llm/lock/acquire", { key: minted.plaintext });
      expect(response.status).toBe(401);
    });

    it("a key revoked or expired while its slot is held still releases it, but no longer renews it", async () => {
      // Leases longer than the key's life, so the slot is still held when the key expires.
      const twoHours = 7_200_000;
      await h.addPool({
        subdomain: "long",
        maxConcurrent: 1,
        termMs: twoHours,
        requestTimeoutMs: twoHours,
      });
      const revoked = await h.mintKey("long");
      const expiring = await h.mintKey("long", { expiresPreset: "1h" });
      const retire = [
        () => h.catalog.revokePoolKey(h.team.id, "long", revoked.key.id),
        () => clock.advance(3_600_000),
      ];
      for (const [index, minted] of [revoked, expiring].entries()) {
        const acquired = await h.lockPost("/pools/long/lock/acquire", { key: minted.plaintext });
        expect(acquired.status).toBe(200);
        const path = `/pools/long/lock/${(await readBody(acquired)).slotId}`;
        await retire[index]!();
        expect((await h.lockPost(`${path}/renew`, { key: minted.plaintext })).status).toBe(401);
        const released = await h.lockPost(`${path}/release`, { key: minted.plaintext });
        expect(released.status).toBe(200);
        expect(await readBody(released)).toEqual({ released: true });
        expect((await h.governor.status("long")).held).toBe(0);
      }
      // Another pool's key, live or not, still releases nothing.
      const acquired = await h.lockPost("/pools/llm/lock/acquire", { key });
      const path = `/pools/llm/lock/${(await readBody(acquired)).slotId}`;
      await h.addPool({ subdomain: "other", maxConcurrent: 1 });
      const foreign = (await h.mintKey("other")).plaintext;
      expect((await h.lockPost(`${path}/release`, { key: foreign })).status).toBe(401);
      expect((await h.governor.status("llm")).held).toBe(1);
    });

    it("a Control API token is not a pool key: 401 wherever it is presented", async () => {
      await h.addPool({ subdomain: "open", maxConcurrent: 1, requireKey: false });
      const token = await h.mintApiToken();
      const carriers: Record<string, string>[] = [
        { "x-svc-key": token },
        { authorization: `Bearer ${token}` },
      ];
      for (const headers of carriers) {
        for (const pool of ["llm", "open"]) {
          const response = await h.lockPost(`/pools/${pool}/lock/acquire`, { headers });
          expect(response.status).toBe(401);
          const body = await readBody(response);
          expect(body.error).toBe("unauthorized");
          expect(body.message).toMatch(/not a pool key/);
          expect(JSON.stringify(body)).not.toContain(token);
        }
      }
    });

    it("a key of pool A never works on pool B", async () => {
      await h.addPool({ subdomain: "other", maxConcurrent: 1 });
      const response = await h.lockPost("/pools/other/lock/acquire", { key });
      expect(response.status).toBe(401);
    });

    it("Authorization: Bearer and Service carry the key only where the pool allows it", async () => {
      const bearer = { authorization: `Bearer ${key}` };
      expect((await h.lockPost("/pools/llm/lock/acquire", { headers: bearer })).status).toBe(401);

      await h.addPool({ subdomain: "open-auth", maxConcurrent: 5, allowAuthorizationHeader: true });
      const authKey = (await h.mintKey("open-auth")).plaintext;
      for (const scheme of ["Bearer", "Service", "service"]) {
        const response = await h.lockPost("/pools/open-auth/lock/acquire", {
          headers: { authorization: `${scheme} ${authKey}` },
        });
        expect(response.status).toBe(200);
      }
    });

    it("a pool with requireKey off admits keyless callers, and logs them without a key id", async () => {
      await h.addPool({ subdomain: "open", maxConcurrent: 1, requireKey: false });
      const response = await h.lockPost("/pools/open/lock/acquire");
      expect(response.status).toBe(200);
      expect((await h.accessLog.list("open"))[0]).toMatchObject({
        keyId: null,
        outcome: "admitted",
      });
      // A presented key must still be valid there.
      expect((await h.lockPost("/pools/open/lock/acquire", { key })).status).toBe(401);
    });

    it("a read-only key may take a lock (a slot is not an upstream call)", async () => {
      const readKey = (await h.mintKey("llm", { access: "read" })).plaintext;
      expect((await h.lockPost("/pools/llm/lock/acquire", { key: readKey })).status).toBe(200);
    });
  });

  describe("pools and slots", () => {
    it("an unknown pool is 401 unauthorized, as for a key of another pool (pool-existence.test.ts)", async () => {
      const response = await h.lockPost("/pools/nope/lock/acquire", { key });
      expect(response.status).toBe(401);
      expect(await readBody(response)).toMatchObject({ error: "unauthorized" });
    });

    it("an absurdly long pool name is 401 unauthorized without being echoed back", async () => {
      const response = await h.lockPost(`/pools/${"x".repeat(5_000)}/lock/acquire`, { key });
      expect(response.status).toBe(401);
      const body = await readBody(response);
      expect(body.error).toBe("unauthorized");
      expect(body.message).not.toContain("xxx");
    });

    it.each([
      ["renew", "not-a-uuid", 404],
      ["renew", "%2e%2e%2f%00", 404],
      ["renew", "x".repeat(4_000), 404],
      ["release", "not-a-uuid", 200],
      ["release", "x".repeat(4_000), 200],
    ])("%s of a malformed slotId %#: never a 500", async (action, slotId, status) => {
      const response = await h.lockPost(`/pools/llm/lock/${slotId}/${action}`, { key });
      expect(response.status).toBe(status);
      const body = await readBody(response);
      if (status === 404) expect(body.error).toBe("not_found");
      else expect(body).toEqual({ released: false });
    });

    it("a slotId of pool A is not found on pool B", async () => {
      await h.addPool({ subdomain: "other", maxConcurrent: 1 });
      const otherKey = (await h.mintKey("other")).plaintext;
      const grant = await readBody(await acquire());
      const renew = await h.lockPost(`/pools/other/lock/${grant.slotId}/renew`, { key: otherKey });
      expect(renew.status).toBe(404);
      const release = await h.lockPost(`/pools/other/lock/${grant.slotId}/release`, {
        key: otherKey,
      });
      expect(await readBody(release)).toEqual({ released: false });
      expect((await h.governor.status("llm")).held).toBe(1);
    });

    it("slotIds are unguessable (random UUIDs, all distinct)", async () => {
      await h.addPool({ subdomain: "wide", maxConcurrent: 50 });
      const wideKey = (await h.mintKey("wide")).plaintext;
      const ids = new Set<string>();
      for (let i = 0; i < 20; i++) {
        const grant = await readBody(
          await h.lockPost("/pools/wide/lock/acquire", { key: wideKey }),
        );
        expect(grant.slotId).toMatch(
          /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
        );
        ids.add(grant.slotId);
      }
      expect(ids.size).toBe(20);
    });

    it("other methods are 405, other paths 404 not_found", async () => {
      expect((await fetch(`${h.lock.url}/pools/llm/lock/acquire`)).status).toBe(405);
      expect((await h.lockPost("/pools/llm/locks/acquire", { key })).status).toBe(404);
    });
  });

  describe("release outcome reports", () => {
    it.each([
      ["status below 100", { status: 99 }, /status/],
      ["status above 599", { status: 600 }, /status/],
      ["fractional status", { status: 200.5 }, /status/],
      ["string status", { status: "200" }, /status/],
      ["negative throttled", { throttled: -1 }, /throttled/],
      ["throttled beyond a safe integer", { throttled: 1e300 }, /throttled/],
      ["negative retryAfterMs", { retryAfterMs: -5 }, /retryAfterMs/],
      ["negative rate.remaining", { rate: { remaining: -1 } }, /rate\.remaining/],
      ["headers that are not an object", { headers: "x-ratelimit-limit: 5" }, /headers/],
      ["a report that is not an object", [200], /outcome|object/],
    ])(
      "%s is 400 invalid_request with a clear message, and the slot is released",
      async (_what, report, field) => {
        const grant = await readBody(await acquire());
        const response = await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, {
          key,
          body: JSON.stringify(report),
        });
        expect(response.status).toBe(400);
        const body = await readBody(response);
        expect(body.error).toBe("invalid_request");
        expect(body.message).toMatch(field);
        expect(body.message).toMatch(/released/);
        expect(body.released).toBe(true);
        expect(body.ignored.join(" ")).toMatch(field);
        expect((await h.governor.status("llm")).held).toBe(0);
      },
    );

    it("valid fields of a partly invalid report still feed learning", async () => {
      const grant = await readBody(await acquire());
      const response = await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, {
        key,
        body: JSON.stringify({ status: 700, throttled: -1, retryAfterMs: 4_000 }),
      });
      expect(response.status).toBe(400);
      const body = await readBody(response);
      expect(body.released).toBe(true);
      expect(body.ignored.join(" ")).toMatch(/status/);
      expect(body.ignored.join(" ")).toMatch(/throttled/);
      const status = await h.governor.status("llm");
      expect(status.held).toBe(0);
      expect(status.learned.pausedUntil).toBe(clock.now() + 4_000);
    });

    it("a bad report on a slot that is already gone says so (released false)", async () => {
      const grant = await readBody(await acquire());
      await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, { key });
      const response = await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, {
        key,
        body: '{"status":1000}',
      });
      expect(response.status).toBe(400);
      expect(await readBody(response)).toMatchObject({
        error: "invalid_request",
        released: false,
      });
    });

    it("a report that is not UTF-8 is 400 and ignored, and the slot is released", async () => {
      const grant = await readBody(await acquire());
      // A header value with a lone 0xff byte: a lenient decode took it as "\uFFFD".
      const body = Uint8Array.from([
        ...Buffer.from('{"status":200,"headers":{"retry-after":"'),
        0xff,
        ...Buffer.from('"}}'),
      ]);
      const response = await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, { key, body });
      expect(response.status).toBe(400);
      expect(await readBody(response)).toMatchObject({
        error: "invalid_request",
        released: true,
        ignored: ["body: The request body is not valid JSON. The outcome report was ignored."],
      });
      expect((await h.governor.status("llm")).held).toBe(0);
    });

    it("a malformed JSON report is 400, and the slot is released all the same", async () => {
      const grant = await readBody(await acquire());
      const response = await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, {
        key,
        body: "{status:",
      });
      expect(response.status).toBe(400);
      expect(await readBody(response)).toMatchObject({
        error: "invalid_request",
        released: true,
      });
      expect((await h.governor.status("llm")).held).toBe(0);
    });

    it("a valid report with rate and headers is 200 {released: true} and rate wins", async () => {
      const grant = await readBody(await acquire());
      const response = await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, {
        key,
        body: JSON.stringify({
          status: 200,
          throttled: 0,
          rate: { limit: 120, remaining: 0, resetMs: 30_000 },
          headers: { "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499" },
        }),
      });
      expect(response.status).toBe(200);
      expect(await readBody(response)).toEqual({ released: true });
      const status = await h.governor.status("llm");
      expect(status.held).toBe(0);
      // The rate object's limit (120/min) wins over the headers' 500; remaining 0 pauses until reset.
      expect(status.learned.rpm).toBe(120);
      expect(status.learned.pausedUntil).toBe(clock.now() + 30_000);
    });

    it("an oversized report is 413, and the slot is released all the same", async () => {
      const grant = await readBody(await acquire());
      const response = await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, {
        key,
        body: JSON.stringify({ status: 200, headers: { big: "x".repeat(20_000) } }),
      });
      expect(response.status).toBe(413);
      expect(await readBody(response)).toMatchObject({
        error: "payload_too_large",
        released: true,
      });
      expect((await h.governor.status("llm")).held).toBe(0);
    });
  });

  describe("access log", () => {
    it("logs acquire attempts with key, outcome and address; never renewals or releases", async () => {
      const minted = await h.mintKey("llm");
      const grant = await readBody(
        await h.lockPost("/pools/llm/lock/acquire", { key: minted.plaintext }),
      );
      await h.lockPost(`/pools/llm/lock/${grant.slotId}/renew`, { key });
      await h.lockPost("/pools/llm/lock/acquire", { key });
      await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, { key });
      const log = await h.accessLog.list("llm");
      expect(log.map((entry) => entry.outcome)).toEqual(["rejected", "admitted"]);
      expect(log[1]).toMatchObject({
        keyId: minted.key.id,
        remoteAddress: "127.0.0.1",
        source: "lock",
      });
      expect(log[0]).toMatchObject({ reason: "concurrency" });
    });
  });
});
