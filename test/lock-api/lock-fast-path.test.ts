import { request as httpRequest } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { matchLockRoute, pathOfUrl } from "../../adapters/hono/lock/lock-routes.js";
import { requestHeaders } from "../../adapters/hono/lock/request-headers.js";
import { createHostRouter } from "../../adapters/server/host-router.js";
import { createHarness, type Harness, type Listening, listen, readBody } from "./harness.js";

/** One POST with headers given as raw name/value pairs (so a field can repeat). */
function rawPost(
  port: number,
  path: string,
  rawHeaders: string[],
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: "127.0.0.1", port, method: "POST", path, headers: rawHeaders },
      (incoming) => {
        let body = "";
        incoming.setEncoding("utf8");
        incoming.on("data", (chunk: string) => {
          body += chunk;
        });
        incoming.once("end", () => resolve({ status: incoming.statusCode ?? 0, body }));
      },
    );
    outgoing.once("error", reject);
    outgoing.end();
  });
}

describe("matchLockRoute (the Lock API's routes outside Hono's router)", () => {
  it("matches the three routes and nothing Hono would not match", async () => {
    expect(matchLockRoute("/pools/llm/lock/acquire")).toEqual({ action: "acquire", pool: "llm" });
    expect(matchLockRoute("/pools/llm/lock/abc/renew")).toEqual({
      action: "renew",
      pool: "llm",
      slotId: "abc",
    });
    expect(matchLockRoute("/pools/llm/lock/acquire/release")).toEqual({
      action: "release",
      pool: "llm",
      slotId: "acquire",
    });
    for (const path of [
      "/pools/llm/lock/acquire/",
      "/pools//lock/acquire",
      "/pools/llm/lock//renew",
      "/pools/llm/lock/a/b/renew",
      "/pools/llm/x/lock/acquire",
      "/pools/llm/lock/abc/extend",
      "/pool/llm/lock/acquire",
      // Escaped paths are left to Hono, which decodes them.
      "/pools/ll%6D/lock/acquire",
    ]) {
      expect(matchLockRoute(path), path).toBeNull();
    }
  });

  it("takes the path of an absolute URL up to its query", async () => {
    expect(pathOfUrl("http://lock.test:8080/pools/a/lock/acquire?x=/y")).toBe(
      "/pools/a/lock/acquire",
    );
    expect(pathOfUrl("https://lock.test/")).toBe("/");
  });
});

describe("requestHeaders (reads Node's raw headers like Headers.get)", () => {
  it("joins repeated fields, ignores case, trims, and answers null when absent", async () => {
    const env = {
      incoming: {
        rawHeaders: ["X-Svc-Key", " a ", "Host", "h.test", "x-svc-key", "b\t"],
      },
    };
    const headers = requestHeaders(env, new Request("http://h.test/"));
    expect(headers.get("x-svc-key")).toBe("a, b");
    expect(headers.get("host")).toBe("h.test");
    expect(headers.get("authorization")).toBeNull();
  });

  it("uses the web request's headers off Node", async () => {
    const request = new Request("http://h.test/", { headers: { "X-Svc-Key": "k" } });
    expect(requestHeaders(undefined, request).get("x-svc-key")).toBe("k");
  });
});

describe("Lock API on a socket: fast path and Hono fallback answer alike", () => {
  let h: Harness;
  let key: string;

  beforeEach(async () => {
    h = await createHarness();
    await h.addPool({ subdomain: "llm", maxConcurrent: 2 });
    key = (await h.mintKey("llm")).plaintext;
  });
  afterEach(async () => h.close());

  it("an escaped path goes through Hono's decoding and reaches the same slot", async () => {
    const acquired = await h.lockPost("/pools/llm/lock/acquire", { key });
    expect(acquired.status).toBe(200);
    const { slotId } = (await readBody(acquired)) as unknown as { slotId: string };
    const renewed = await h.lockPost(`/pools/ll%6D/lock/${slotId}/renew`, { key });
    expect(renewed.status).toBe(200);
    const released = await h.lockPost(`/pools/ll%6d/lock/${slotId}/release`, { key });
    expect(await readBody(released)).toEqual({ released: true });
  });

  it("another method on a lock route is 405 with Allow: POST; near-miss paths are a JSON 404", async () => {
    for (const path of ["/pools/llm/lock/acquire", "/pools/llm/lock/some-slot/renew"]) {
      for (const method of ["GET", "PUT", "DELETE"]) {
        const wrong = await fetch(`${h.lock.url}${path}`, {
          method,
          headers: { "x-svc-key": key },
        });
        expect(wrong.status).toBe(405);
        expect(wrong.headers.get("allow")).toBe("POST");
        expect((await readBody(wrong)).error).toBe("method_not_allowed");
      }
    }
    const slash = await h.lockPost("/pools/llm/lock/acquire/", { key });
    expect(slash.status).toBe(404);
    expect((await readBody(slash)).error).toBe("not_found");
    expect(h.governor).toBeDefined();
    expect((await h.governor.status("llm")).held).toBe(0);
  });

  it("a repeated X-Svc-Key is one joined value (not a valid key), as with Headers", async () => {
    const twice = await rawPost(h.lock.port, "/pools/llm/lock/acquire", [
      "Host",
      "127.0.0.1",
      "X-Svc-Key",
      key,
      "X-Svc-Key",
      key,
    ]);
    expect(twice.status).toBe(401);
    expect(JSON.parse(twice.body).error).toBe("unauthorized");
    const padded = await rawPost(h.lock.port, "/pools/llm/lock/acquire", [
      "Host",
      "127.0.0.1",
      "X-Svc-Key",
      ` ${key} `,
    ]);
    expect(padded.status).toBe(200);
  });
});

describe("host router in front of the Lock API", () => {
  let h: Harness;
  let served: Listening;
  let key: string;

  beforeEach(async () => {
    h = await createHarness();
    await h.addPool({ subdomain: "llm", maxConcurrent: 2 });
    key = (await h.mintKey("llm")).plaintext;
    const lockApp = { fetch: (request: Request, env?: unknown) => fetchLock(h, request, env) };
    const router = createHostRouter({
      baseUrl: "http://api.test",
      lockUrl: "http://lock.test",
      poolDomain: "pools.test",
      controlApp: { fetch: () => new Response("control", { status: 200 }) },
      lockApp,
    });
    served = await listen(router.fetch);
  });
  afterEach(async () => {
    await served.close();
    await h.close();
  });

  it("routes by Host on the fast path, escaped paths through Hono, unknown hosts to 404", async () => {
    const post = (path: string, host: string) =>
      rawPost(served.port, path, ["Host", host, "X-Svc-Key", key]);
    const acquired = await post("/pools/llm/lock/acquire", "lock.test:8080");
    expect(acquired.status).toBe(200);
    const { slotId } = JSON.parse(acquired.body) as { slotId: string };
    const released = await post(`/pools/ll%6D/lock/${slotId}/release`, "lock.test");
    expect(JSON.parse(released.body)).toEqual({ released: true });
    const control = await post("/api/v1/me", "api.test");
    expect(control).toEqual({ status: 200, body: "control" });
    const unknown = await post("/pools/llm/lock/acquire", "elsewhere.test");
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error).toBe("not_found");
  });

  it("an app that throws is a 500, not a dropped connection", async () => {
    const router = createHostRouter({
      baseUrl: "http://api.test",
      lockUrl: "http://lock.test",
      poolDomain: "pools.test",
      controlApp: {
        fetch: () => {
          throw new Error("boom");
        },
      },
    });
    const failing = await listen(router.fetch);
    const original = console.error;
    console.error = () => {};
    try {
      const answer = await rawPost(failing.port, "/", ["Host", "api.test"]);
      expect(answer.status).toBe(500);
    } finally {
      console.error = original;
      await failing.close();
    }
  });
});

/** The harness's lock app, reached through the router's env (so the Node bindings pass on). */
function fetchLock(h: Harness, request: Request, env: unknown): Promise<Response> {
  return Promise.resolve(h.lockApp.fetch(request, env));
}
