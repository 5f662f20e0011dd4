import { request as httpRequest } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLockApp } from "../../adapters/hono/lock/create-lock-app.js";
import { createProxyApp } from "../../adapters/hono/proxy/create-proxy-app.js";
import { createHostRouter } from "../../adapters/server/host-router.js";
import { createHarness, type Harness, listen, POOL_DOMAIN, readBody } from "../lock-api/harness.js";
import { poolRequest } from "./client.js";
import { TestUpstream } from "./upstream.js";

const LIMIT = 3;

/** GET straight to the origin, as a Lock API caller does once it holds a slot. */
function callOriginDirectly(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { agent: false }, (response) => {
      response.resume();
      response.once("end", () => resolve(response.statusCode ?? 0));
    });
    outgoing.once("error", reject);
    outgoing.end();
  });
}

describe("one limit for proxy and Lock API traffic", () => {
  let h: Harness;
  let upstream: TestUpstream;

  beforeEach(async () => {
    upstream = await new TestUpstream().start();
    h = await createHarness();
    await h.addPool({
      subdomain: "llm",
      origin: upstream.url,
      maxConcurrent: LIMIT,
      queueSize: 100,
      queueTimeoutMs: 30_000,
    });
  });
  afterEach(async () => {
    await h.close();
    await upstream.stop();
  });

  it("the origin never sees more requests at once than the pool's limit", async () => {
    let working = 0;
    let mostAtOnce = 0;
    upstream.on("/work", async (_request, response) => {
      working++;
      mostAtOnce = Math.max(mostAtOnce, working);
      await new Promise((resolve) => setTimeout(resolve, 3 + Math.random() * 8));
      // Counted down before answering: the next holder may call as soon as the answer lands.
      working--;
      response.end("done");
    });
    const key = (await h.mintKey("llm")).plaintext;

    const viaProxy = Array.from({ length: 24 }, () =>
      poolRequest(h.proxy.port, {
        host: `llm.${POOL_DOMAIN}`,
        path: "/work",
        headers: { "x-svc-key": key, "x-svc-queue-timeout-ms": "30000" },
      }).then((reply) => reply.status),
    );
    const viaLock = Array.from({ length: 24 }, async () => {
      const acquired = await h.lockPost("/pools/llm/lock/acquire", {
        key,
        body: '{"waitMs":30000}',
      });
      if (acquired.status !== 200) return acquired.status;
      const { slotId } = await readBody(acquired);
      const status = await callOriginDirectly(`${upstream.url}/work`);
      await h.lockPost(`/pools/llm/lock/${slotId}/release`, {
        key,
        body: JSON.stringify({ status }),
      });
      return status;
    });

    const statuses = await Promise.all([...viaProxy, ...viaLock]);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(upstream.hits).toBe(48);
    expect(mostAtOnce).toBeLessThanOrEqual(LIMIT);
    // The test only means something if the limit was actually reached.
    expect(mostAtOnce).toBe(LIMIT);
    expect((await h.governor.status("llm")).held).toBe(0);
    const sources = new Set(
      (await h.accessLog.list("llm", { limit: 100 })).map((entry) => entry.source),
    );
    expect(sources).toEqual(new Set(["lock", "proxy"]));
  });

  it("serves both behind the server's host router: lock routes on the lock host, pools on pool hosts", async () => {
    const key = (await h.mintKey("llm")).plaintext;
    const lockApp = createLockApp({ governor: h.governor, catalog: h.catalog });
    const proxyApp = createProxyApp({
      governor: h.governor,
      catalog: h.catalog,
      poolDomain: POOL_DOMAIN,
    });
    const router = createHostRouter({
      baseUrl: "http://api.test",
      lockUrl: "http://lock.test",
      poolDomain: POOL_DOMAIN,
      controlApp: { fetch: () => new Response("control") },
      lockApp,
      proxyApp,
    });
    const served = await listen(router.fetch);
    try {
      const lock = await poolRequest(served.port, {
        host: "lock.test",
        method: "POST",
        path: "/pools/llm/lock/acquire",
        headers: { "x-svc-key": key },
      });
      expect(lock.status).toBe(200);
      const { slotId } = JSON.parse(lock.body);
      await h.governor.release("llm", slotId);

      const proxied = await poolRequest(served.port, {
        host: `llm.${POOL_DOMAIN}:8080`,
        path: "/v1/models",
        headers: { "x-svc-key": key },
      });
      expect(proxied.status).toBe(200);
      expect(JSON.parse(proxied.body).url).toBe("/v1/models");
      expect(proxied.headers["x-svc-effective-limit"]).toBe(String(LIMIT));

      // The lock routes exist only on the lock host.
      const onApiHost = await poolRequest(served.port, {
        host: "api.test",
        method: "POST",
        path: "/pools/llm/lock/acquire",
        headers: { "x-svc-key": key },
      });
      expect(onApiHost.status).toBe(404);
      expect(JSON.parse(onApiHost.body)).toMatchObject({ error: "not_found" });
    } finally {
      await served.close();
      proxyApp.close();
    }
  });
});
