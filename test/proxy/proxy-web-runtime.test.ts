import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import { createHarness, type Harness, POOL_DOMAIN, waitFor } from "../lock-api/harness.js";
import { deferred, TestUpstream } from "./upstream.js";

/**
 * Off `@hono/node-server` (no Node bindings in `env`, as with `app.request()` or other
 * runtimes) the proxy answers with web streams; the same guarantees hold.
 */
describe("pool proxy without Node bindings (web streams)", () => {
  let h: Harness;
  let upstream: TestUpstream;
  let key: string;

  beforeEach(async () => {
    upstream = await new TestUpstream().start();
    h = await createHarness();
    await h.addPool({ subdomain: "llm", origin: upstream.url, maxConcurrent: 1 });
    key = (await h.mintKey("llm")).plaintext;
  });
  afterEach(async () => {
    await h.close();
    await upstream.stop();
  });

  const call = (path: string, init: RequestInit = {}) =>
    h.proxyApp.request(`http://llm.${POOL_DOMAIN}${path}`, {
      ...init,
      headers: {
        host: `llm.${POOL_DOMAIN}`,
        "x-svc-key": key,
        ...(init.headers as Record<string, string>),
      },
    });

  it("streams events as they come and frees the slot when the reader cancels", async () => {
    const sendLast = deferred();
    upstream.on("/sse", async (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: first\n\n");
      await sendLast.promise;
      response.end("data: last\n\n");
    });
    const response = await call("/sse");
    expect(response.headers.get("x-svc-effective-limit")).toBe("1");
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n");
    expect((await h.governor.status("llm")).held).toBe(1);
    await reader.cancel();
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
    sendLast.resolve();
  });

  it("sends request bodies and releases the slot with the origin's outcome at the end", async () => {
    const response = await call("/echo", { method: "POST", body: '{"q":1}' });
    expect(response.status).toBe(200);
    expect(JSON.parse(await response.text()).body).toBe('{"q":1}');
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
  });

  it("a request undici refuses outright is 502, frees the slot and leaves no timer behind", async () => {
    const clock = h.manualClock as ManualClock;
    // The timers a served request leaves running (lease keeping, log flushes) are the baseline.
    expect((await call("/echo")).status).toBe(200);
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
    const before = clock.pendingTimers;
    const response = await call("/echo", {
      method: "POST",
      body: "four",
      headers: { "content-length": "abc" },
    });
    expect(response.status).toBe(502);
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
    expect(clock.pendingTimers).toBe(before);
  });

  it("an origin status a web Response cannot carry is 502, not a hang", async () => {
    upstream.on("/odd", (_request, response) => {
      response.writeHead(600);
      response.end("odd");
    });
    // @hono/node-server swaps in a lenient Response subclass; other runtimes have the real one.
    const lenient = globalThis.Response;
    const parent = Object.getPrototypeOf(lenient) as typeof Response;
    globalThis.Response = parent === Function.prototype ? lenient : parent;
    try {
      const response = await call("/odd");
      expect(response.status).toBe(502);
    } finally {
      globalThis.Response = lenient;
    }
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
  });

  it("keeps repeated Set-Cookie headers apart", async () => {
    upstream.on("/cookies", (_request, response) => {
      response.setHeader("set-cookie", [
        "a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT",
        "b=2; Expires=Thu, 22 Oct 2026 07:28:00 GMT",
      ]);
      response.end("ok");
    });
    const response = await call("/cookies");
    expect(response.headers.getSetCookie()).toEqual([
      "a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT",
      "b=2; Expires=Thu, 22 Oct 2026 07:28:00 GMT",
    ]);
    await response.text();
    await waitFor(async () => (await h.governor.status("llm")).held === 0);
  });
});
