import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { DATABASE_FILE, openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { SqliteAccessLogStore } from "../../adapters/sqlite/access-log-store.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { poolInput } from "../catalog/fixtures.js";
import { waitFor } from "../lock-api/harness.js";
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
    const data = openDataDir({ dataDir: dir });
    try {
      const { team, owner } = data.catalog.createTeamWithOwner({
        teamName: "Acme",
        slug: "acme",
        ownerName: "Ada",
        ownerEmail: "ada@acme.test",
      });
      token = data.catalog.createApiToken({
        teamId: team.id,
        actorUserId: owner.id,
        name: "readme",
        abilities: ["keys:write"],
        lifetime: "1m",
      }).plaintext;
      data.catalog.store.upsertPool(
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
      await waitFor(() => read().length === 2, 5_000);
      expect(read().map((entry) => entry.source)).toEqual(["proxy", "lock"]);
    } finally {
      database.close();
    }
  });

  it("the lock routes exist only on the lock URL: other hosts answer 404, a pool host proxies the path", async () => {
    server = await createSluiceServer(loadServerConfig({ flags: { port: "0", dataDir: dir } }), {
      ...DEFAULT_SERVER_APPS,
    });
    const { port } = await server.listen();
    const minted = await poolRequest(port, {
      host: `127.0.0.1:${port}`,
      method: "POST",
      path: "/api/v1/pools/llm/keys",
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
    });
    const key = JSON.parse(minted.body).data.key as string;
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
});
