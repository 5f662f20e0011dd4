import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { hostWithoutPort } from "../../adapters/hono/host-name.js";
import { createHostRouter } from "../../adapters/server/host-router.js";

/** An app that says which app it is, and the path it saw (to prove paths are not rewritten). */
function namedApp(name: string): Hono {
  const app = new Hono();
  app.all("*", (c) => c.json({ app: name, path: c.req.path }));
  return app;
}

const apps = {
  controlApp: namedApp("control"),
  lockApp: namedApp("lock"),
  proxyApp: namedApp("proxy"),
};

async function route(router: Hono, host: string, path = "/api/v1/me") {
  const response = await router.request(path, { headers: { host } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("host routing with one base and lock host", () => {
  const router = createHostRouter({
    baseUrl: "http://localhost:8080",
    lockUrl: "http://localhost:8080",
    poolDomain: "pools.localhost",
    ...apps,
  });

  it("sends the base host to the control app, with or without port", async () => {
    expect(await route(router, "localhost:8080")).toEqual({
      status: 200,
      body: { app: "control", path: "/api/v1/me" },
    });
    expect((await route(router, "LOCALHOST")).body.app).toBe("control");
  });

  it("treats loopback names as the same host", async () => {
    expect((await route(router, "127.0.0.1:8080")).body.app).toBe("control");
    expect((await route(router, "[::1]:8080")).body.app).toBe("control");
  });

  it("sends /pools/* on the lock host to the lock app, unchanged", async () => {
    expect(await route(router, "localhost:8080", "/pools/chat/lock/acquire")).toEqual({
      status: 200,
      body: { app: "lock", path: "/pools/chat/lock/acquire" },
    });
    // Only the /pools prefix, not every path starting with the letters.
    expect((await route(router, "localhost:8080", "/poolsx")).body.app).toBe("control");
  });

  it("sends <label>.<poolDomain> to the proxy, whatever the path", async () => {
    expect(await route(router, "chat.pools.localhost:8080", "/v1/chat/completions")).toEqual({
      status: 200,
      body: { app: "proxy", path: "/v1/chat/completions" },
    });
    // The lock routes never exist on a pool's own host.
    expect(
      (await route(router, "chat.pools.localhost:8080", "/pools/chat/lock/acquire")).body.app,
    ).toBe("proxy");
  });

  it("answers 404 for unknown hosts, nested labels and the bare pool domain", async () => {
    for (const host of [
      "example.com",
      "a.b.pools.localhost",
      "pools.localhost",
      "-x.pools.localhost",
      "evil.localhost.example",
    ]) {
      expect(await route(router, host)).toEqual({
        status: 404,
        body: { error: "not_found", message: expect.stringContaining("--base-url") },
      });
    }
  });
});

describe("host routing with a separate lock host", () => {
  const router = createHostRouter({
    baseUrl: "https://api.sluice.test",
    lockUrl: "https://lock.sluice.test",
    poolDomain: "pools.sluice.test",
    ...apps,
  });

  it("serves the lock app only on the lock host", async () => {
    expect((await route(router, "lock.sluice.test", "/pools/chat/lock/acquire")).body.app).toBe(
      "lock",
    );
    // Elsewhere a lock path answers in the Lock API's error shape, which a lock client reads.
    expect(await route(router, "api.sluice.test", "/pools/chat/lock/acquire")).toEqual({
      status: 404,
      body: { error: "not_found", message: expect.stringContaining("--lock-url") },
    });
    expect((await route(router, "api.sluice.test", "/api/v1/me")).body.app).toBe("control");
  });

  it("does not serve the Control API on the lock host", async () => {
    expect(await route(router, "lock.sluice.test", "/api/v1/me")).toEqual({
      status: 404,
      body: { error: "not_found", message: expect.stringContaining("Host header") },
    });
  });
});

describe("host routing before the lock and proxy apps exist", () => {
  const router = createHostRouter({
    baseUrl: "http://localhost:8080",
    lockUrl: "http://localhost:8080",
    poolDomain: "pools.localhost",
    controlApp: apps.controlApp,
  });

  it("answers 404 not_found on pool hosts and lock paths", async () => {
    expect(await route(router, "chat.pools.localhost:8080", "/")).toEqual({
      status: 404,
      body: { error: "not_found", message: "Not found." },
    });
    expect(await route(router, "localhost:8080", "/pools/chat/lock/acquire")).toEqual({
      status: 404,
      body: { error: "not_found", message: "Not found." },
    });
    expect((await route(router, "localhost:8080")).body.app).toBe("control");
  });
});

describe("hostWithoutPort", () => {
  it.each([
    ["chat.pools.localhost:8080", "chat.pools.localhost"],
    ["Chat.Pools.Localhost", "chat.pools.localhost"],
    ["example.com.", "example.com"],
    ["[::1]:8080", "::1"],
    ["::1", "::1"],
    ["127.0.0.1:80", "127.0.0.1"],
  ])("%s → %s", (header, host) => {
    expect(hostWithoutPort(header)).toBe(host);
  });
});
