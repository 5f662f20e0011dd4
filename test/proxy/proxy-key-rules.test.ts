import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import { createHarness, type Harness, POOL_DOMAIN } from "../lock-api/harness.js";
import { poolRequest } from "./client.js";
import { TestUpstream } from "./upstream.js";

const HOST = `search.${POOL_DOMAIN}`;

/** Contract 4.1 rule 2 and section 5 on the proxy: which keys reach the origin, and how far. */
describe("pool proxy key rules", () => {
  let h: Harness;
  let upstream: TestUpstream;
  let readKey: string;
  let writeKey: string;

  beforeEach(async () => {
    upstream = await new TestUpstream().start();
    h = await createHarness();
    // POST is a read under /v1/search only; QUERY is a read anywhere (not scoped).
    await h.addPool({
      subdomain: "search",
      origin: upstream.url,
      maxConcurrent: 2,
      readMethods: ["POST", "QUERY"],
      readPaths: { POST: ["/v1/search"] },
    });
    readKey = (await h.mintKey("search", { access: "read" })).plaintext;
    writeKey = (await h.mintKey("search")).plaintext;
  });
  afterEach(async () => {
    await h.close();
    await upstream.stop();
  });

  const send = (key: string, method: string, path: string, body?: string) =>
    poolRequest(h.proxy.port, {
      host: HOST,
      method,
      path,
      headers: {
        "x-svc-key": key,
        // Node's client frames a DELETE body only with an explicit length.
        ...(body === undefined
          ? {}
          : { "content-type": "text/plain", "content-length": String(Buffer.byteLength(body)) }),
      },
      body,
    });
  const slotsTaken = () => h.governor.metrics.totals("search", 0, Number.MAX_SAFE_INTEGER).requests;

  it.each(["GET", "HEAD", "OPTIONS"])("a read-only key admits %s", async (method) => {
    const reply = await send(readKey, method, "/v1/anything");
    expect(reply.status).toBe(200);
    expect(upstream.seen.at(-1)?.method).toBe(method);
  });

  it.each([
    ["POST", "/v1/search"],
    ["POST", "/v1/search/similar?k=3"],
    ["QUERY", "/v1/models"],
  ])("a read-only key admits the pool's extra read method %s %s", async (method, path) => {
    const reply = await send(readKey, method, path, "q");
    expect(reply.status).toBe(200);
    expect(upstream.hits).toBe(1);
    expect(slotsTaken()).toBe(1);
  });

  it.each([
    ["POST outside its prefix", "POST", "/v1/chat"],
    ["POST on a look-alike prefix", "POST", "/v1/searchx"],
    // Paths escaping the prefix (dot segments, encoded slashes) are 400 for every key:
    // see proxy-ambiguous-paths.test.ts.
    ["PUT (not a read on this pool)", "PUT", "/v1/search"],
    ["DELETE", "DELETE", "/v1/search/1"],
    ["PATCH", "PATCH", "/v1/search"],
  ])(
    "a read-only key's %s is 403 before the origin and before a slot",
    async (_what, method, path) => {
      const reply = await send(readKey, method, path, "x".repeat(64));
      expect(reply.status).toBe(403);
      const body = JSON.parse(reply.body);
      expect(body.error).toBe("unauthorized");
      expect(body.message).toMatch(/read-only/);
      expect(reply.headers["x-svc-rejected-by"]).toBe("sluice");
      expect(upstream.hits).toBe(0);
      expect(slotsTaken()).toBe(0);
      expect(await h.accessLog.list("search")).toEqual([]);
    },
  );

  it.each([
    ["x-http-method-override", "GET", "DELETE"],
    ["x-http-method", "POST", "put"],
    ["x-method-override", "GET", "PATCH"],
  ])(
    "a read-only key cannot ask for a write through %s (403, origin untouched)",
    async (header, method, overridden) => {
      const reply = await poolRequest(h.proxy.port, {
        host: HOST,
        method,
        path: "/v1/search",
        headers: { "x-svc-key": readKey, [header]: overridden },
      });
      expect(reply.status).toBe(403);
      expect(JSON.parse(reply.body).message).toMatch(/method-override header/);
      expect(upstream.hits).toBe(0);
      expect(slotsTaken()).toBe(0);
    },
  );

  it("a method-override header naming a read, or sent with a write key, passes", async () => {
    const withOverride = (key: string, overridden: string) =>
      poolRequest(h.proxy.port, {
        host: HOST,
        method: "POST",
        path: "/v1/search",
        headers: { "x-svc-key": key, "x-http-method-override": overridden },
      });
    expect((await withOverride(readKey, "GET")).status).toBe(200);
    expect((await withOverride(writeKey, "DELETE")).status).toBe(200);
    expect(upstream.hits).toBe(2);
  });

  it("a write key (the default) admits every method anywhere", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      expect((await send(writeKey, method, "/v1/chat", "{}")).status).toBe(200);
    }
    expect(upstream.hits).toBe(4);
  });

  it("expired, revoked and foreign keys are 401 on the proxy, before the origin", async () => {
    const clock = h.manualClock as ManualClock;
    const expiring = (await h.mintKey("search", { expiresPreset: "1h" })).plaintext;
    const revoked = await h.mintKey("search");
    await h.catalog.revokePoolKey(h.team.id, "search", revoked.key.id);
    await h.addPool({ subdomain: "other", origin: upstream.url, maxConcurrent: 1 });
    const foreign = (await h.mintKey("other")).plaintext;

    expect((await send(expiring, "GET", "/")).status).toBe(200);
    await clock.advance(3_600_000);
    for (const key of [expiring, revoked.plaintext, foreign, "slc_key_guess"]) {
      const reply = await send(key, "GET", "/");
      expect(reply.status).toBe(401);
      expect(JSON.parse(reply.body).error).toBe("unauthorized");
    }
    expect(upstream.hits).toBe(1);
  });
});
