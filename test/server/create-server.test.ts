import { existsSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { loadServerConfig, type ServerConfig } from "../../adapters/server/config.js";
import {
  createSluiceServer,
  type ServerAppDeps,
  type SluiceServer,
  type SluiceServerOptions,
} from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { openSluiceDatabase, SqliteMetricsStore } from "../../adapters/sqlite/index.js";
import { RejectedError } from "../../src/errors.js";
import { cliEnv, runSluice, tempDir } from "../cli/cli-process.js";
import { accessLogEntry } from "../lock-api/access-log-entry.js";
import { poolInput } from "./fixtures.js";
import { httpRequest, rawExchange } from "./http-client.js";

let dir: string;
let cleanup: () => void;
let token: string;
let running: SluiceServer | undefined;
let lines: string[];

/** Seeds a team, an owner token and pools straight into the data directory, as the CLI would. */
async function seedCatalog(pools: { subdomain: string; maxConcurrent: number }[]): Promise<void> {
  const data = await openDataDir({ dataDir: dir });
  try {
    const { team, owner } = await data.catalog.createTeamWithOwner({
      teamName: "Acme",
      slug: "acme",
      ownerName: "Ada",
      ownerEmail: "ada@example.com",
    });
    token = (
      await data.catalog.createApiToken({
        teamId: team.id,
        actorUserId: owner.id,
        name: "test",
        abilities: ["pools:read"],
        lifetime: "1m",
      })
    ).plaintext;
    for (const pool of pools) {
      await data.catalog.store.upsertPool(
        team.id,
        poolInput(pool.subdomain, { maxConcurrent: pool.maxConcurrent }),
      );
    }
  } finally {
    data.close();
  }
}

/** The JSON body of a raw HTTP/1.1 answer (after the blank line ending its head). */
function jsonBody(answer: string): unknown {
  return JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
}

function config(flags: Record<string, string> = {}): ServerConfig {
  return loadServerConfig({ flags: { port: "0", dataDir: dir, ...flags } });
}

async function start(flags: Record<string, string> = {}, options: SluiceServerOptions = {}) {
  running = await createSluiceServer(config(flags), {
    log: (line) => lines.push(line),
    ...options,
  });
  return { server: running, ...(await running.listen()) };
}

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("sluice-server-"));
  lines = [];
  running = undefined;
});

afterEach(async () => {
  await running?.close();
  cleanup();
});

describe("createSluiceServer over a real socket", () => {
  it("answers GET /api/v1/me on the base host with the token's user, team and abilities", async () => {
    await seedCatalog([]);
    const { port, url } = await start();
    expect(url).toBe(`http://localhost:${port}`);
    const me = await httpRequest({
      port,
      path: "/api/v1/me",
      host: `localhost:${port}`,
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
    });
    expect(me.status).toBe(200);
    expect(me.json()).toEqual({
      user: { id: 1, name: "Ada", email: "ada@example.com" },
      team: { id: 1, name: "Acme", slug: "acme" },
      abilities: ["pools:read"],
    });
    const anonymous = await httpRequest({ port, path: "/api/v1/me", host: `localhost:${port}` });
    expect(anonymous.status).toBe(401);
  });

  it("routes by Host: unknown hosts and pool hosts without a proxy answer 404 not_found", async () => {
    await seedCatalog([]);
    const { port } = await start();
    for (const host of [`elsewhere.example:${port}`, `chat.pools.localhost:${port}`]) {
      const answer = await httpRequest({ port, path: "/api/v1/me", host });
      expect(answer.status).toBe(404);
      expect(answer.json()).toEqual({ error: "not_found", message: expect.any(String) });
    }
  });

  it("routes a request in absolute-form by its target's host, not its Host header", async () => {
    await seedCatalog([]);
    const { port } = await start();
    const request = (target: string, host: string) =>
      rawExchange(
        port,
        `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\n` +
          "Connection: close\r\n\r\n",
      );
    const toControl = await request(`http://LOCALHOST:${port}/api/v1/me`, `elsewhere.example`);
    expect(toControl).toMatch(/^HTTP\/1\.1 200 /);
    expect(jsonBody(toControl)).toMatchObject({ team: { slug: "acme" } });
    const toElsewhere = await request(`http://elsewhere.example/api/v1/me`, `localhost:${port}`);
    expect(toElsewhere).toMatch(/^HTTP\/1\.1 404 /);
    expect(jsonBody(toElsewhere)).toMatchObject({ error: "not_found" });
  });

  it("answers an HTTP/1.0 request without Host as one for an unknown host, but its health checks", async () => {
    seedCatalog([]);
    const { port } = await start();
    for (const path of ["/api/v1/me", "/pools/chat/lock/acquire"]) {
      const answer = await rawExchange(
        port,
        `GET ${path} HTTP/1.0\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      );
      expect(answer, path).toMatch(/^HTTP\/1\.[01] 404 /);
      expect(jsonBody(answer)).toEqual({
        error: "not_found",
        message: expect.stringContaining("Sluice routes requests by their Host header"),
      });
    }
    // A load balancer's check, as HAProxy's `option httpchk` sends it by default.
    for (const [path, body] of [
      ["/healthz", { status: "ok" }],
      ["/readyz", { status: "ready" }],
    ] as const) {
      const answer = await rawExchange(port, `GET ${path} HTTP/1.0\r\n\r\n`);
      expect(answer, path).toMatch(/^HTTP\/1\.[01] 200 /);
      expect(jsonBody(answer)).toMatchObject(body);
    }
  });

  it("logs an IPv6 listen address in brackets, as it is written in a URL", async () => {
    await seedCatalog([]);
    const { port } = await start({ host: "::1" });
    expect(lines).toContain(`Listening on [::1]:${port}`);
  });

  it("routes a Host of any letter case (host names are case-insensitive)", async () => {
    await seedCatalog([]);
    const { port } = await start();
    const me = await httpRequest({
      port,
      path: "/api/v1/me",
      host: `LocalHost:${port}`,
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
    });
    expect(me.status).toBe(200);
  });

  it("answers a request it cannot read with 400 in the error shape", async () => {
    await seedCatalog([]);
    const { port } = await start();
    const answer = await rawExchange(
      port,
      "OPTIONS * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain("x-svc-rejected-by: sluice");
    expect(jsonBody(answer)).toEqual({
      error: "invalid_request",
      message: "The asterisk-form target (OPTIONS *) is not served: ask for a path.",
    });
    const ftp = await rawExchange(
      port,
      "GET ftp://chat.pools.localhost/x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    expect(jsonBody(ftp)).toEqual({
      error: "invalid_request",
      message: "The request target must be a path, or an http:// or https:// URL.",
    });
  });

  it("answers what Node's parser refuses in the error shape, then closes", async () => {
    await seedCatalog([]);
    const { port } = await start();
    // The body is longer than announced: its rest is read as a (broken) next request.
    const overlong = await rawExchange(
      port,
      "POST /api/v1/me HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n" + '{"label":"x"}',
    );
    expect(overlong).toMatch(/HTTP\/1\.1 400 Bad Request\r\n/);
    expect(jsonBody(overlong.slice(overlong.lastIndexOf("HTTP/1.1 400")))).toEqual({
      error: "invalid_request",
      message: "The request cannot be served: it is not a well-formed HTTP/1.1 request.",
    });
    const hugeHeader = await rawExchange(
      port,
      `GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    expect(hugeHeader).toMatch(/^HTTP\/1\.1 431 /);
    expect(hugeHeader).toContain("x-svc-rejected-by: sluice");
  });

  it("answers a HEAD whose headers are too large with a 431 and no body", async () => {
    await seedCatalog([]);
    const { port } = await start();
    // Node's client, as the fuzz pass sent it: a body after a HEAD answer is a parse error.
    const answer = await httpRequest({
      port,
      path: "/api/v1/me",
      host: "localhost",
      method: "HEAD",
      headers: { "x-big": "a".repeat(20_000) },
    });
    expect(answer.status).toBe(431);
    expect(answer.headers["x-svc-rejected-by"]).toBe("sluice");
    const raw = await rawExchange(
      port,
      `HEAD /api/v1/me HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    expect(raw).toMatch(/^HTTP\/1\.1 431 /);
    expect(raw.endsWith("\r\n\r\n")).toBe(true);
  });

  it("answers a request without Host in the error shape", async () => {
    await seedCatalog([]);
    const { port } = await start();
    const answer = await rawExchange(port, "GET /api/v1/me HTTP/1.1\r\nConnection: close\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain("x-svc-rejected-by: sluice");
    expect(jsonBody(answer)).toMatchObject({ error: "invalid_request" });
  });

  it("answers a pipelined request in full before closing on a broken one after it", async () => {
    await seedCatalog([]);
    const { port } = await start();
    const answer = await rawExchange(
      port,
      `GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n\r\n` +
        "GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(jsonBody(answer)).toMatchObject({ team: { slug: "acme" } });
  });

  it("routes an absolute-form target whatever the letter case of its scheme", async () => {
    await seedCatalog([]);
    const { port } = await start();
    const answer = await rawExchange(
      port,
      `GET HTTP://localhost:${port}/api/v1/me HTTP/1.1\r\nHost: elsewhere.example\r\n` +
        `Authorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("answers CONNECT with 405 in the error shape instead of dropping the connection", async () => {
    await seedCatalog([]);
    const { port } = await start();
    const answer = await rawExchange(
      port,
      "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
    );
    expect(answer).toMatch(/^HTTP\/1\.1 405 /);
    expect(answer).toContain("x-svc-rejected-by: sluice");
    expect(jsonBody(answer)).toMatchObject({
      error: "method_not_allowed",
    });
  });

  it("defines the catalog's pools in the governor at start", async () => {
    await seedCatalog([
      { subdomain: "chat", maxConcurrent: 2 },
      { subdomain: "embed", maxConcurrent: 1 },
    ]);
    const { server } = await start();
    expect(server.governor.pools().sort()).toEqual(["chat", "embed"]);
    expect(server.governor.poolSettings("chat")?.maxConcurrent).toBe(2);
    expect(lines).toContain("Catalog synced: 2 pools defined (chat, embed)");
  });

  it("mounts the lock and proxy apps built by the factories, with the server's parts", async () => {
    await seedCatalog([{ subdomain: "chat", maxConcurrent: 2 }]);
    let received: ServerAppDeps | undefined;
    const lockApp = (deps: ServerAppDeps) => {
      received = deps;
      const app = new Hono();
      app.post("/pools/:pool/lock/acquire", async (c) =>
        c.json(await deps.governor.acquire(c.req.param("pool"))),
      );
      return app;
    };
    const proxyApp = () => {
      const app = new Hono();
      app.all("*", (c) => c.json({ proxied: c.req.header("host") }));
      return app;
    };
    const { server, port } = await start({}, { lockApp, proxyApp });
    expect(received?.governor).toBe(server.governor);
    expect(received?.catalog).toBe(server.catalog);
    expect(received?.config.port).toBe(0);

    const grant = await httpRequest({
      port,
      method: "POST",
      path: "/pools/chat/lock/acquire",
      host: `localhost:${port}`,
    });
    expect(grant.status).toBe(200);
    expect(grant.json()).toMatchObject({ slotId: expect.any(String), remainingSlots: 1 });
    expect((await server.governor.status("chat")).held).toBe(1);

    const proxied = await httpRequest({
      port,
      path: "/v1/models",
      host: `chat.pools.localhost:${port}`,
    });
    expect(proxied.json()).toEqual({ proxied: `chat.pools.localhost:${port}` });
  });
});

describe("graceful shutdown", () => {
  /** A proxy app whose requests wait for the test; `arrived` resolves when one is in flight. */
  function slowProxy() {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived!: () => void;
    const inFlight = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const factory = () => {
      const app = new Hono();
      app.get("/slow", async (c) => {
        arrived();
        await gate;
        return c.text("done");
      });
      return app;
    };
    return { factory, release, inFlight };
  }

  it("stops accepting, lets an in-flight request finish, then saves metrics and closes", async () => {
    await seedCatalog([{ subdomain: "chat", maxConcurrent: 2 }]);
    const slow = slowProxy();
    const { server, port } = await start({}, { proxyApp: slow.factory });
    const grant = await server.governor.acquire("chat");
    await server.governor.release("chat", grant.slotId);

    const pending = httpRequest({ port, path: "/slow", host: `chat.pools.localhost:${port}` });
    await slow.inFlight;
    const closed = server.close();
    await vi.waitFor(() =>
      expect(lines.some((line) => line.startsWith("Stopped accepting"))).toBe(true),
    );
    await expect(
      httpRequest({ port, path: "/api/v1/me", host: `localhost:${port}` }),
    ).rejects.toThrow(/ECONNREFUSED/);

    slow.release();
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(answer.body).toBe("done");
    await closed;
    expect(lines.slice(-5)).toEqual([
      "Stopped accepting connections; waiting up to 10000 ms for 1 in-flight request",
      "All requests finished",
      "Closed the governor",
      "Saved 1 metric bucket",
      "Closed the database",
    ]);

    const database = openSluiceDatabase(join(dir, "sluice.db"));
    const saved = await new SqliteMetricsStore(database).loadBuckets(0);
    database.close();
    expect(saved).toEqual([
      expect.objectContaining({ pool: "chat", requests: 1, admitted: 1, released: 1 }),
    ]);
  });

  it("a clean shutdown writes every access-log entry and leaves no WAL behind", async () => {
    const { server } = await start();
    // More than a batch: some are being written (in parts) when close() starts.
    for (let i = 0; i < 1_234; i++) {
      server.accessLog.append(accessLogEntry({ at: 1_700_000_000_000 + i, pool: "chat" }));
    }
    await server.close();
    const wal = join(dir, "sluice.db-wal");
    expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);
    const database = openSluiceDatabase(join(dir, "sluice.db"));
    const stored = database.prepare("SELECT count(*) AS n FROM access_log").get();
    database.close();
    expect(stored).toEqual({ n: 1_234 });
  });

  it("cuts off requests still running after the grace period", async () => {
    await seedCatalog([]);
    const slow = slowProxy();
    const { server, port } = await start({ shutdownGraceMs: "100" }, { proxyApp: slow.factory });
    const pending = httpRequest({ port, path: "/slow", host: `chat.pools.localhost:${port}` });
    await slow.inFlight;
    // Handled from now on: the cut-off may land while close() still runs (it then stops the
    // checkpoint worker and truncates the WAL), before an await after it could attach.
    const cutOff = expect(pending).rejects.toThrow(/socket hang up|ECONNRESET/);
    const startedAt = Date.now();
    await server.close();
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(90);
    await cutOff;
    expect(lines).toContain("Cut off 1 request still running after the grace period");
    slow.release();
  });

  it("does not wait for connections that never sent a request (or only part of one)", async () => {
    await seedCatalog([]);
    const { server, port } = await start();
    const silent = connect(port, "127.0.0.1");
    const partial = connect(port, "127.0.0.1", () => partial.write("GET /api/v1/me HTTP/1.1\r\n"));
    for (const socket of [silent, partial]) {
      socket.on("error", () => {});
      await new Promise((resolve) => socket.once("connect", resolve));
    }
    const startedAt = Date.now();
    await server.close();
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    expect(lines).toContain("All requests finished");
    silent.destroy();
    partial.destroy();
  });

  it("close() is idempotent", async () => {
    await seedCatalog([]);
    const { server } = await start();
    await Promise.all([server.close(), server.close()]);
    await server.close();
    expect(lines.filter((line) => line === "Closed the database")).toHaveLength(1);
  });
});

describe("catalog changes from another process", () => {
  it("apply in a separate CLI process updates the running governor without dropping held slots", async () => {
    await seedCatalog([]);
    const file = join(dir, "pools.json");
    const writeConfig = (maxConcurrent: number) =>
      writeFileSync(
        file,
        JSON.stringify({
          team: "acme",
          pools: [{ name: "Chat", subdomain: "chat", origin: "http://127.0.0.1:9", maxConcurrent }],
        }),
      );
    writeConfig(3);
    const env = cliEnv();
    expect((await runSluice(["apply", file, "--data-dir", dir], env)).code).toBe(0);

    const { server } = await start({ catalogSyncMs: "50" });
    expect(server.governor.poolSettings("chat")?.maxConcurrent).toBe(3);
    await server.governor.acquire("chat");
    await server.governor.acquire("chat");

    writeConfig(1);
    const applied = await runSluice(["apply", file, "--data-dir", dir], env);
    expect(applied.stdout).toContain("Updated pool chat: maxConcurrent 3 → 1");
    await vi.waitFor(() => expect(server.governor.poolSettings("chat")?.maxConcurrent).toBe(1), {
      timeout: 5_000,
    });
    expect(lines).toContain("Catalog synced: 1 pool updated (chat)");
    expect((await server.governor.status("chat")).held).toBe(2);
    await expect(server.governor.acquire("chat")).rejects.toBeInstanceOf(RejectedError);
  });
});

describe("pool metrics when a subdomain changes hands", () => {
  it("never shows a deleted pool's history to the team that takes its subdomain, also after a restart", async () => {
    await seedCatalog([{ subdomain: "chat", maxConcurrent: 2 }]);
    const { server, port } = await start();
    const meter = server.metrics.forPool("chat");
    meter.request(Date.now() - 3_600_000);
    meter.request(Date.now());

    // Acme deletes its pool; Globex creates its own "chat".
    const store = server.catalog.store;
    const acme = (await store.findTeamBySlug("acme"))!;
    await store.deletePool(acme.id, (await store.getPoolBySubdomain(acme.id, "chat"))!.id);
    const globex = await server.catalog.createTeamWithOwner({
      teamName: "Globex",
      slug: "globex",
      ownerName: "Gus",
      ownerEmail: "gus@globex.test",
    });
    await store.upsertPool(globex.team.id, poolInput("chat"));
    const globexToken = (
      await server.catalog.createApiToken({
        teamId: globex.team.id,
        actorUserId: globex.owner.id,
        name: "metrics",
        abilities: ["metrics:read"],
        lifetime: "1m",
      })
    ).plaintext;
    await server.syncCatalog();

    const requestsSeen = async (listeningPort: number) => {
      const answer = await httpRequest({
        port: listeningPort,
        path: "/api/v1/pools/chat/metrics",
        host: `localhost:${listeningPort}`,
        headers: { authorization: `Bearer ${globexToken}`, accept: "application/json" },
      });
      expect(answer.status).toBe(200);
      return answer.json<{ requests: number }>().requests;
    };
    expect(await requestsSeen(port)).toBe(0);
    server.metrics.forPool("chat").request(Date.now());
    expect(await requestsSeen(port)).toBe(1);

    await server.close();
    const restarted = await start();
    expect(await requestsSeen(restarted.port)).toBe(1);
  });
});
