import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { DATABASE_FILE, type OpenDataDir, openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { SqliteAccessLogStore } from "../../adapters/sqlite/access-log-store.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import type { AccessLogEntry } from "../../src/access-log/types.js";
import { tempDir } from "../cli/cli-process.js";
import { poolInput } from "./fixtures.js";
import { httpRequest } from "./http-client.js";

/**
 * The access log is keyed by subdomain; a subdomain freed by `sluice apply --prune` may be
 * taken by another team's pool, which must never see the old pool's attempts.
 */
describe("access log of a subdomain that changes hands (real server, real SQLite)", () => {
  let dir: string;
  let cleanup: () => void;
  let server: SluiceServer | undefined;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir("sluice-access-"));
    server = undefined;
  });

  afterEach(async () => {
    await server?.close();
    cleanup();
  });

  /** Edits the catalog from a second connection, as `sluice apply` in another process does. */
  async function editCatalog<T>(edit: (data: OpenDataDir) => T | Promise<T>): Promise<T> {
    const data = await openDataDir({ dataDir: dir });
    try {
      return await edit(data);
    } finally {
      data.close();
    }
  }

  async function createTeam(slug: string): Promise<number> {
    return await editCatalog(
      async (data) =>
        (
          await data.catalog.createTeamWithOwner({
            teamName: slug,
            slug,
            ownerName: slug,
            ownerEmail: `owner@${slug}.test`,
          })
        ).team.id,
    );
  }

  async function createPoolX(teamId: number): Promise<void> {
    await editCatalog(async (data) =>
      data.catalog.store.upsertPool(teamId, poolInput("x", { maxConcurrent: 1, queueSize: 0 })),
    );
  }

  /** `sluice apply --prune` of a file without pool `x`. */
  async function prunePoolX(teamId: number): Promise<void> {
    await editCatalog(async (data) => {
      const pool = await data.catalog.store.getPoolBySubdomain(teamId, "x");
      expect(pool && (await data.catalog.store.deletePool(teamId, pool.id))).toBe(true);
    });
  }

  async function startServer(): Promise<number> {
    server = await createSluiceServer(loadServerConfig({ flags: { port: "0", dataDir: dir } }), {
      ...DEFAULT_SERVER_APPS,
    });
    return (await server.listen()).port;
  }

  async function acquire(port: number, key: string): Promise<number> {
    const answer = await httpRequest({
      port,
      method: "POST",
      path: "/pools/x/lock/acquire",
      host: `localhost:${port}`,
      headers: { "x-svc-key": key },
    });
    return answer.status;
  }

  async function mintKey(teamId: number): Promise<string> {
    if (!server) throw new Error("server not started");
    return (await server.catalog.mintPoolKey({ teamId, subdomain: "x" })).plaintext;
  }

  /** Every row under `x` in the database, read on its own connection (what is really kept). */
  async function storedRowsOfX(): Promise<AccessLogEntry[]> {
    const database = openSluiceDatabase(join(dir, DATABASE_FILE));
    try {
      const store = new SqliteAccessLogStore(database);
      return await store.list("x", { from: 0, to: Number.MAX_SAFE_INTEGER, limit: 100 });
    } finally {
      database.close();
    }
  }

  it("deletes the old pool's entries (stored and buffered) when another team's pool takes the subdomain", async () => {
    const acme = await createTeam("acme");
    await createPoolX(acme);
    const port = await startServer();
    const acmeKey = await mintKey(acme);
    expect(await acquire(port, acmeKey)).toBe(200);
    await server?.accessLog.flush();
    // The one slot is held: this attempt is turned away and stays in the write buffer.
    expect(await acquire(port, acmeKey)).toBe(429);
    expect(await storedRowsOfX()).toHaveLength(1);

    await prunePoolX(acme);
    const globex = await createTeam("globex");
    await createPoolX(globex);
    await server?.syncCatalog();

    expect(await server?.accessLog.list("x")).toEqual([]);
    expect(await storedRowsOfX()).toEqual([]);

    const globexKey = await mintKey(globex);
    expect(await acquire(port, globexKey)).toBe(200);
    const log = (await server?.accessLog.list("x")) ?? [];
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ pool: "x", outcome: "admitted", source: "lock" });
  });

  it("does not show the old pool's entries after a restart, when the pool changed hands while the server was down", async () => {
    const acme = await createTeam("acme");
    await createPoolX(acme);
    let port = await startServer();
    expect(await acquire(port, await mintKey(acme))).toBe(200);
    await server?.close();
    // Closing wrote the buffered entry; nobody deleted it, since no running server saw the prune.
    expect(await storedRowsOfX()).toHaveLength(1);

    await prunePoolX(acme);
    const globex = await createTeam("globex");
    await createPoolX(globex);
    port = await startServer();

    // Reads start at the new pool's creation, and retention (run at start) deletes the rest.
    expect(await server?.accessLog.list("x")).toEqual([]);
    expect(await storedRowsOfX()).toEqual([]);
    expect(await server?.accessLog.list("x", { from: 0, limit: 10 })).toEqual([]);
    expect(await acquire(port, await mintKey(globex))).toBe(200);
    expect(await server?.accessLog.list("x")).toHaveLength(1);
  });
});
