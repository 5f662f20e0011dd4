import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { POOL_DATABASE_DEFAULTS } from "../../src/catalog/pool-database.js";
import { poolInput } from "../catalog/fixtures.js";
import { poolRequest } from "../proxy/client.js";
import { requirePostgres } from "../support/postgres.js";
import { createReadRoleDatabase, type ReadRoleDatabase } from "../support/read-role.js";

const postgresUp = await requirePostgres("postgres pools in sluice serve");

/** `sluice serve`'s composition serves a postgres pool from its catalog, and closes its connections. */
describe.runIf(postgresUp)("sluice serve with a postgres pool", () => {
  let dir: string;
  let db: ReadRoleDatabase;
  let key: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-serve-pg-"));
    db = await createReadRoleDatabase("sql_server");
    const data = openDataDir({ dataDir: dir });
    try {
      const { team } = await data.catalog.createTeamWithOwner({
        teamName: "Acme",
        slug: "acme",
        ownerName: "Ada",
        ownerEmail: "ada@acme.test",
      });
      await data.catalog.store.upsertPool(
        team.id,
        poolInput({
          subdomain: "warehouse",
          backend: "postgres",
          origin: "postgresql://127.0.0.1:5432/db",
          maxConcurrent: 2,
          allowAuthorizationHeader: true,
          database: data.catalog.sealDatabase(db.readUrl, POOL_DATABASE_DEFAULTS),
        }),
      );
      key = (await data.catalog.mintPoolKey({ teamId: team.id, subdomain: "warehouse" })).plaintext;
    } finally {
      data.close();
    }
  });
  afterAll(async () => {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers POST /sql on the pool host, and leaves no session of the role after close", async () => {
    const server = await createSluiceServer(
      loadServerConfig({ flags: { port: "0", dataDir: dir } }),
      { ...DEFAULT_SERVER_APPS },
    );
    try {
      const { port } = await server.listen();
      const reply = await poolRequest(port, {
        host: `warehouse.${server.config.poolDomain}`,
        method: "POST",
        path: "/sql",
        headers: { authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: "SELECT count(*)::int AS n FROM items" }),
      });
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.body).rows).toEqual([{ n: 3 }]);
    } finally {
      await server.close();
    }
    const sessions = async () =>
      (
        await db.admin("SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1", [
          db.role,
        ])
      ).rows[0].n;
    const deadline = Date.now() + 3_000;
    while ((await sessions()) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await sessions()).toBe(0);
  });
});
