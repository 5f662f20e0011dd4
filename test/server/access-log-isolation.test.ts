import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { DATABASE_FILE, openDataDir } from "../../adapters/server/data-dir.js";
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

  beforeEach(() => {
    ({ dir, cleanup } = tempDir("sluice-access-"));
    server = undefined;
  });

  afterEach(async () => {
    await server?.close();
    cleanup();
  });

  /** Edits the catalog from a second connection, as `sluice apply` in another process does. */
  function editCatalog<T>(edit: (data: ReturnType<typeof openDataDir>) => T): T {
    const data = openDataDir({ dataDir: dir });
    try {
      return edit(data);
    } finally {
      data.close();
    }
  }

  function createTeam(slug: string): number {
    return editCatalog(
      (data) =>
        data.catalog.createTeamWithOwner({
          teamName: slug,
          slug,
          ownerName: slug,
          ownerEmail: `owner@${slug}.test`,
        }).team.id,
    );
  }

  function createPoolX(teamId: number): void {
    editCatalog((data) =>
      data.catalog.store.upsertPool(teamId, poolInput("x", { maxConcurrent: 1, queueSize: 0 })),
    );
  }

  /** `sluice apply --prune` of a file without pool `x`. */
  function prunePoolX(teamId: number): void {
    editCatalog((data) => {
      const pool = data.catalog.store.getPoolBySubdomain(teamId, "x");
      expect(pool && data.catalog.store.deletePool(teamId, pool.id)).toBe(true);
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

  function mintKey(teamId: number): string {
    if (!server) throw new Error("server not started");
    return server.catalog.mintPoolKey({ teamId, subdomain: "x" }).plaintext;
  }

  /** Every row under `x` in the database, read on its own connection (what is really kept). */
  function storedRowsOfX(): AccessLogEntry[] {
    const database = openSluiceDatabase(join(dir, DATABASE_FILE));
    try {
      const store = new SqliteAccessLogStore(database);
      return store.list("x", { from: 0, to: Number.MAX_SAFE_INTEGER, limit: 100 });
    } finally {
      database.close();
    }
  }

  it("deletes the old pool's entries (stored and buffered) when another team's pool takes the subdomain", async () => {
    const acme = createTeam("acme");
    createPoolX(acme);
    const port = await startServer();
    const acmeKey = mintKey(acme);
    expect(await acquire(port, acmeKey)).toBe(200);
    server?.accessLog.flush();
    // The one slot is held: this attempt is turned away and stays in the write buffer.
    expect(await acquire(port, acmeKey)).toBe(429);
    expect(storedRowsOfX()).toHaveLength(1);

    prunePoolX(acme);
    const globex = createTeam("globex");
    createPoolX(globex);
    await server?.syncCatalog();

    expect(server?.accessLog.list("x")).toEqual([]);
    expect(storedRowsOfX()).toEqual([]);

    const globexKey = mintKey(globex);
    expect(await acquire(port, globexKey)).toBe(200);
    const log = server?.accessLog.list("x") ?? [];
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ pool: "x", outcome: "admitted", source: "lock" });
  });

  it("does not show the old pool's entries after a restart, when the pool changed hands while the server was down", async () => {
    const acme = createTeam("acme");
    createPoolX(acme);
    let port = await startServer();
    expect(await acquire(port, mintKey(acme))).toBe(200);
    await server?.close();
    // Closing wrote the buffered entry; nobody deleted it, since no running server saw the prune.
    expect(storedRowsOfX()).toHaveLength(1);

    prunePoolX(acme);
    const globex = createTeam("globex");
    createPoolX(globex);
    port = await startServer();

    // Reads start at the new pool's creation, and retention (run at start) deletes the rest.
    expect(server?.accessLog.list("x")).toEqual([]);
    expect(storedRowsOfX()).toEqual([]);
    expect(server?.accessLog.list("x", { from: 0, limit: 10 })).toEqual([]);
    expect(await acquire(port, mintKey(globex))).toBe(200);
    expect(server?.accessLog.list("x")).toHaveLength(1);
  });
});
