import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../adapters/cli/run-cli.js";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { captureIo, sluiceIn } from "../cli/capture-io.js";
import { CREATE_ACME } from "../cli/cli-process.js";
import { poolRequest } from "../proxy/client.js";
import { requirePostgres } from "../support/postgres.js";
import { createReadRoleDatabase, type ReadRoleDatabase } from "../support/read-role.js";

const postgresUp = await requirePostgres("postgres pools in sluice serve");

/** A postgres pool made with `sluice apply`, served by `sluice serve`'s composition, closed with it. */
describe.runIf(postgresUp)("sluice serve with a postgres pool", () => {
  let dir: string;
  let db: ReadRoleDatabase;
  let key: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-serve-pg-"));
    db = await createReadRoleDatabase("sql_server");
    // The way an operator sets it up: sluice team create, then sluice apply.
    expect(await sluiceIn(dir, CREATE_ACME)).toMatchObject({ code: 0 });
    const file = join(dir, "pools.json");
    writeFileSync(
      file,
      JSON.stringify({
        team: "acme",
        pools: [
          {
            name: "Warehouse",
            subdomain: "warehouse",
            backend: "postgres",
            maxConcurrent: 2,
            database: { valueFromEnv: "WAREHOUSE_READ_URL" },
          },
        ],
      }),
    );
    const applied = captureIo({ SLUICE_DATA_DIR: dir, WAREHOUSE_READ_URL: db.readUrl });
    expect(await runCli(["apply", file], applied.io)).toBe(0);
    const data = await openDataDir({ dataDir: dir });
    try {
      const minted = await data.catalog.mintPoolKey({ teamId: 1, subdomain: "warehouse" });
      key = minted.plaintext;
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
