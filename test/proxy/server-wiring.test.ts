import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { DATABASE_FILE, openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { SqliteAccessLogStore } from "../../adapters/sqlite/access-log-store.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteMetricsStore } from "../../adapters/sqlite/sqlite-metrics-store.js";
import { poolInput } from "../catalog/fixtures.js";
import { waitFor } from "../lock-api/harness.js";
import { rawExchange } from "../server/http-client.js";
import { poolRequest } from "./client.js";
import { TestUpstream } from "./upstream.js";

/** `sluice serve`'s composition: Control API, Lock API and proxy on one port. */
describe("sluice serve with the default apps", () => {
  let dir: string;
  let upstream: TestUpstream;
  let server: SluiceServer | undefined;
  let token: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-serve-"));
    upstream = await new TestUpstream().start();
    const data = await openDataDir({ dataDir: dir });
    try {
      const { team, owner } = await data.catalog.createTeamWithOwner({
        teamName: "Acme",
        slug: "acme",
        ownerName: "Ada",
        ownerEmail: "ada@acme.test",
      });
      token = (
        await data.catalog.createApiToken({
          teamId: team.id,
          actorUserId: owner.id,
          name: "readme",
          abilities: ["keys:write"],
          lifetime: "1m",
        })
      ).plaintext;
      await data.catalog.store.upsertPool(
        team.id,
        poolInput({
          subdomain: "llm",
          origin: upstream.url,
          maxConcurrent: 2,
          credential: data.catalog.sealCredential("x-api-key", "upstream-secret"),
        }),
      );
    } finally {
      data.close();
    }
  });
  /** `sluice serve`'s composition on a free port, and a key of pool llm minted through it. */
  async function serveWithKey(
    flags: Record<string, string> = {},
  ): Promise<{ port: number; key: string }> {
    server = await createSluiceServer(
      loadServerConfig({ flags: { port: "0", dataDir: dir, ...flags } }),
      { ...DEFAULT_SERVER_APPS },
    );
    const { port } = await server.listen();
    const minted = await poolRequest(port, {
      host: `127.0.0.1:${port}`,
      method: "POST",
      path: "/api/v1/pools/llm/keys",
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
    });
    return { port, key: JSON.parse(minted.body).data.key as string };
  }

  afterEach(async () => {
    await server?.close();
    await upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("mints a key on the Control API, then locks and proxies with it; attempts reach the access log", async () => {
    server = await createSluiceServer(loadServerConfig({ flags: { port: "0", dataDir: dir } }), {
      ...DEFAULT_SERVER_APPS,
    });
    const { port } = await server.listen();
    const host = `127.0.0.1:${port}`;
    const minted = await poolRequest(port, {
      host,
      method: "POST",
      path: "/api/v1/pools/llm/keys",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify({ label: "readme", expires_preset: "24h" }),
    });
    expect(minted.status).toBe(201);
    const key = JSON.parse(minted.body).data.key as string;

    const acquired = await poolRequest(port, {
      host,
      method: "POST",
      path: "/pools/llm/lock/acquire",
      headers: { "x-svc-key": key },
    });
    expect(acquired.status).toBe(200);
    const { slotId } = JSON.parse(acquired.body);
    const renewed = await poolRequest(port, {
      host,
      method: "POST",
      path: `/pools/llm/lock/${slotId}/renew`,
      headers: { "x-svc-key": key },
    });
    expect(renewed.status).toBe(200);
    const released = await poolRequest(port, {
      host,
      method: "POST",
      path: `/pools/llm/lock/${slotId}/release`,
      headers: { "x-svc-key": key, "content-type": "application/json" },
      body: '{"status":200}',
    });
    expect(JSON.parse(released.body)).toEqual({ released: true });

    const proxied = await poolRequest(port, {
      host: `llm.pools.localhost:${port}`,
      path: "/v1/models?limit=1",
      headers: { "x-svc-key": key },
    });
    expect(proxied.status).toBe(200);
    expect(upstream.seen[0]?.headers["x-api-key"]).toBe("upstream-secret");
    expect(upstream.seen[0]?.url).toBe("/v1/models?limit=1");

    const database = openSluiceDatabase(join(dir, DATABASE_FILE));
    try {
      const store = new SqliteAccessLogStore(database);
      const read = () => store.list("llm", { from: 0, to: Number.MAX_SAFE_INTEGER, limit: 10 });
      await waitFor(async () => (await read()).length === 2, 5_000);
      expect((await read()).map((entry) => entry.source)).toEqual(["proxy", "lock"]);
    } finally {
      database.close();
    }
  });

  it("the lock routes exist only on the lock URL: other hosts answer 404, a pool host proxies the path", async () => {
    const { port, key } = await serveWithKey();
    const lockCall = (host: string) =>
      poolRequest(port, {
        host,
        method: "POST",
        path: "/pools/llm/lock/acquire",
        headers: { "x-svc-key": key },
      });

    for (const host of [
      "elsewhere.test",
      `api.example.test:${port}`,
      `a.b.pools.localhost:${port}`,
    ]) {
      const reply = await lockCall(host);
      expect(reply.status).toBe(404);
      expect(reply.body).not.toContain("slotId");
    }
    // On a pool's own host the path is just a path of the origin: no lock is granted.
    upstream.on("/pools/llm/lock/acquire", (_request, response) => {
      response.writeHead(404, { "content-type": "text/plain" });
      response.end("origin: no such path");
    });
    const onPoolHost = await lockCall(`llm.pools.localhost:${port}`);
    expect(onPoolHost.status).toBe(404);
    expect(onPoolHost.body).toBe("origin: no such path");
    expect(upstream.seen.map((seen) => seen.url)).toEqual(["/pools/llm/lock/acquire"]);
    // The lock host itself grants it.
    expect((await lockCall(`localhost:${port}`)).status).toBe(200);
  });

  it("a request in absolute-form goes to the pool its target names, with only the path upstream", async () => {
    const { port, key } = await serveWithKey();
    const answer = await rawExchange(
      port,
      `GET http://llm.pools.localhost:${port}/v1/models?page=2 HTTP/1.1\r\n` +
        `Host: localhost:${port}\r\nX-Svc-Key: ${key}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(upstream.seen.map((seen) => seen.url)).toEqual(["/v1/models?page=2"]);
  });

  it("a proxied request cut off at shutdown is saved as released in the metrics", async () => {
    upstream.onStream("/slow", () => {
      // Never answers: the request is still running when the grace period ends.
    });
    const { port, key } = await serveWithKey({ shutdownGraceMs: "100" });
    const cutOff = poolRequest(port, {
      host: `llm.pools.localhost:${port}`,
      path: "/slow",
      headers: { "x-svc-key": key },
    }).catch((error: Error) => error);
    await waitFor(async () => (await server!.governor.status("llm")).held === 1);
    await server!.close();
    expect(await cutOff).toBeInstanceOf(Error);
    const database = openSluiceDatabase(join(dir, DATABASE_FILE));
    try {
      const saved = await new SqliteMetricsStore(database).loadBuckets(0);
      expect(saved).toEqual([expect.objectContaining({ pool: "llm", admitted: 1, released: 1 })]);
    } finally {
      database.close();
    }
  });

  it("Expect: 100-continue: the proxy says continue only once key and slot are in hand", async () => {
    server = await createSluiceServer(loadServerConfig({ flags: { port: "0", dataDir: dir } }), {
      ...DEFAULT_SERVER_APPS,
    });
    const { port } = await server.listen();
    const upload = (host: string, path: string, headers: string[]) =>
      new ExpectingUpload(port, [
        `POST ${path} HTTP/1.1`,
        `Host: ${host}`,
        "Expect: 100-continue",
        "Content-Type: application/json",
        "Content-Length: 2",
        ...headers,
      ]);

    // The Control API says continue at once.
    const mint = upload(`127.0.0.1:${port}`, "/api/v1/pools/llm/keys", [
      `Authorization: Bearer ${token}`,
    ]);
    expect(await mint.firstAnswer()).toMatch(/^HTTP\/1\.1 100 Continue/);
    const minted = await mint.sendBody("{}");
    expect(minted).toMatch(/^HTTP\/1\.1 201/);
    const key = JSON.parse(minted.slice(minted.indexOf("\r\n\r\n") + 4)).data.key as string;

    const poolHost = `llm.pools.localhost:${port}`;
    // A wrong key is refused before the body is sent, and the connection closes after.
    const badKey = upload(poolHost, "/v1/chat", ["X-Svc-Key: slc_key_wrong"]);
    expect(await badKey.firstAnswer()).toMatch(/^HTTP\/1\.1 401/);
    await badKey.closed;

    // Both slots held: a caller that will not queue is refused without uploading.
    const holders = [];
    for (let i = 0; i < 2; i++) {
      const held = await poolRequest(port, {
        host: `127.0.0.1:${port}`,
        method: "POST",
        path: "/pools/llm/lock/acquire",
        headers: { "x-svc-key": key },
      });
      holders.push(JSON.parse(held.body).slotId as string);
    }
    const full = upload(poolHost, "/v1/chat", [`X-Svc-Key: ${key}`, "X-Svc-No-Queue: 1"]);
    expect(await full.firstAnswer()).toMatch(/^HTTP\/1\.1 429/);
    await full.closed;
    expect(upstream.hits).toBe(0);

    // A queued caller hears continue when a slot frees, and its body reaches the origin.
    const queued = upload(poolHost, "/v1/chat", [`X-Svc-Key: ${key}`]);
    const firstAnswer = queued.firstAnswer();
    expect(await Promise.race([firstAnswer, delay(200, "nothing yet")])).toBe("nothing yet");
    await poolRequest(port, {
      host: `127.0.0.1:${port}`,
      method: "POST",
      path: `/pools/llm/lock/${holders[0]}/release`,
      headers: { "x-svc-key": key },
    });
    expect(await firstAnswer).toMatch(/^HTTP\/1\.1 100 Continue/);
    expect(await queued.sendBody("{}")).toMatch(/^HTTP\/1\.1 200/);
    expect(upstream.seen.map((seen) => seen.body.toString())).toEqual(["{}"]);
    queued.close();
  });

  it("the Lock API admits browser calls from the server's own URLs and --cors-origins only", async () => {
    // Behind a TLS proxy: the page's origin is https, the request reaches Sluice as http.
    server = await createSluiceServer(
      loadServerConfig({
        flags: {
          port: "0",
          dataDir: dir,
          baseUrl: "https://sluice.example",
          corsOrigins: "https://app.example",
        },
      }),
      { ...DEFAULT_SERVER_APPS },
    );
    const { port } = await server.listen();
    const acquire = (origin: string) =>
      poolRequest(port, {
        host: "sluice.example",
        method: "POST",
        path: "/pools/llm/lock/acquire",
        headers: { origin },
      });
    // Admitted origins reach the key check (401: no key), with CORS headers to read it.
    for (const origin of ["https://sluice.example", "https://app.example"]) {
      const answer = await acquire(origin);
      expect(answer.status, origin).toBe(401);
      expect(answer.headers["access-control-allow-origin"]).toBe(origin);
    }
    const foreign = await acquire("https://elsewhere.example");
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error).toBe("unauthorized");
  });
});

function delay<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms));
}

/** A raw HTTP/1.1 request whose head asks `Expect: 100-continue`; the body waits to be sent. */
class ExpectingUpload {
  private readonly socket: Socket;
  private received = "";
  private waiting: ((text: string) => void) | null = null;
  readonly closed: Promise<void>;

  constructor(port: number, headLines: string[]) {
    this.socket = connect(port, "127.0.0.1");
    this.socket.setEncoding("utf8");
    this.socket.write(`${headLines.join("\r\n")}\r\n\r\n`);
    this.socket.on("data", (chunk: string) => {
      this.received += chunk;
      if (this.waiting && this.received.includes("\r\n\r\n")) this.take();
    });
    this.closed = new Promise((resolve) => this.socket.on("close", () => resolve()));
  }

  /** The first head Sluice answers with (a 100 Continue, or a final answer and its body). */
  firstAnswer(): Promise<string> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      if (this.received.includes("\r\n\r\n")) this.take();
    });
  }

  /** Sends the body and answers the final response (head and body). */
  async sendBody(body: string): Promise<string> {
    this.socket.write(body);
    const answer = await this.firstAnswer();
    // Wait for the whole body of a short answer.
    await delay(50, undefined);
    return answer + this.takeRest();
  }

  close(): void {
    this.socket.destroy();
  }

  private take(): void {
    const resolve = this.waiting!;
    this.waiting = null;
    const end = this.received.indexOf("\r\n\r\n") + 4;
    const head = this.received.slice(0, end);
    this.received = this.received.slice(end);
    resolve(head);
  }

  private takeRest(): string {
    const rest = this.received;
    this.received = "";
    return rest;
  }
}
