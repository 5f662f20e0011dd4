import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { MemoryOAuthStore } from "../../adapters/oauth/memory-oauth-store.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteCatalogStore } from "../../adapters/sqlite/sqlite-catalog-store.js";
import { SqliteOAuthStore } from "../../adapters/sqlite/sqlite-oauth-store.js";
import { postgresFixture } from "../postgres/pg-fixture.js";
import { requirePostgres } from "../support/postgres.js";
import { describeOAuthStoreContract } from "./oauth-store-contract.js";

describeOAuthStoreContract("memory", () => ({
  store: new MemoryOAuthStore(),
  teamId: 1,
  userId: 1,
  close() {},
}));

describeOAuthStoreContract("sqlite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-oauth-store-"));
  const database = openSluiceDatabase(join(dir, "sluice.db"));
  const catalog = new SqliteCatalogStore({ database });
  const team = await catalog.createTeam({ name: "Acme", slug: "acme" });
  const user = await catalog.createUser({ name: "Ada", email: "ada@acme.test" });
  return {
    store: new SqliteOAuthStore(database),
    teamId: team.id,
    userId: user.id,
    close() {
      database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

if (await requirePostgres("the PostgreSQL OAuth store")) {
  const postgres = postgresFixture("pg_oauth");
  afterAll(() => postgres.drop());
  describeOAuthStoreContract("postgres", async () => {
    const catalog = await postgres.open();
    const team = await catalog.store.createTeam({ name: "Acme", slug: "acme" });
    const user = await catalog.store.createUser({ name: "Ada", email: "ada@acme.test" });
    return { store: catalog.oauth, teamId: team.id, userId: user.id, close: () => catalog.close() };
  });
}
