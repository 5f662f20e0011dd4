import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../adapters/cli/run-cli.js";
import { openCatalogDatabase } from "../../adapters/server/catalog-database.js";
import { createTestDatabase, requirePostgres, type TestDatabase } from "../support/postgres.js";
import { captureIo } from "./capture-io.js";
import { CREATE_ACME, tempDir } from "./cli-process.js";

const dirs = tempDir();
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const database of databases) await database.drop();
  dirs.cleanup();
});

/** Runs `sluice <args>` in-process against `url` with no SLUICE_SECRET_KEY at all. */
async function keyless(url: string, args: readonly string[]) {
  const captured = captureIo({ SLUICE_DATABASE_URL: url, SLUICE_DATA_DIR: join(dirs.dir, "x") });
  const code = await runCli(args, captured.io);
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}

if (await requirePostgres("CLI commands on PostgreSQL without SLUICE_SECRET_KEY")) {
  describe("CLI commands on a PostgreSQL catalog without SLUICE_SECRET_KEY", () => {
    it("run when they seal nothing (users, sign-in links, tokens), and refuse when they would", {
      timeout: 60_000,
    }, async () => {
      const database = await createTestDatabase("pg_cli_keyless");
      databases.push(database);
      const run = (...args: string[]) => keyless(database.url, args);
      expect(await run(...CREATE_ACME)).toMatchObject({ code: 0, stderr: "" });
      const add = ["user", "add", "--team", "acme", "--email", "bo@example.com"];
      expect(await run(...add, "--name", "Bo")).toMatchObject({ code: 0, stderr: "" });
      const link = await run(
        ...["user", "sign-in-link", "--email", "bo@example.com"],
        ...["--base-url", "https://sluice.example.com"],
      );
      expect(link).toMatchObject({ code: 0, stderr: "" });
      expect(link.stdout).toContain("/sign-in/link?token=");
      const token = await run(
        ...["token", "create", "--team", "acme", "--user", "ada@example.com"],
        ...["--name", "ci", "--abilities", "pools:read", "--lifetime", "1mo"],
      );
      expect(token).toMatchObject({ code: 0, stderr: "" });
      expect(await run("status")).toMatchObject({ code: 0, stderr: "" });
      // apply may seal upstream credentials: it still needs the fleet's key.
      const file = join(dirs.dir, "apply.json");
      writeFileSync(file, JSON.stringify({ team: "acme", budgets: [], pools: [] }));
      const apply = await run("apply", file);
      expect(apply.code).toBe(2);
      expect(apply.stderr).toContain("A PostgreSQL catalog needs SLUICE_SECRET_KEY");
      // Opened without the key, nothing can be sealed with a stand-in key by mistake.
      const opened = await openCatalogDatabase({
        dataDir: join(dirs.dir, "x"),
        databaseUrl: database.url,
        needsSecretKey: false,
      });
      try {
        expect(() => opened.catalog.sealCredential("authorization", "Bearer sk")).toThrow(
          "This needs SLUICE_SECRET_KEY",
        );
      } finally {
        await opened.close();
      }
    });
  });
}
