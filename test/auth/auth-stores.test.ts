import { afterAll } from "vitest";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteAuthStore } from "../../adapters/sqlite/sqlite-auth-store.js";
import { SqliteCatalogStore } from "../../adapters/sqlite/sqlite-catalog-store.js";
import { MemoryAuthStore } from "../../src/auth/memory-auth-store.js";
import { MemoryCatalogStore } from "../../src/catalog/memory-catalog-store.js";
import { postgresFixture } from "../postgres/pg-fixture.js";
import { requirePostgres } from "../support/postgres.js";
import { describeAuthStoreContract } from "./auth-store-contract.js";

describeAuthStoreContract("memory", async () => ({
  store: new MemoryAuthStore(),
  catalog: new MemoryCatalogStore(),
}));

describeAuthStoreContract("sqlite", async () => {
  const database = openSluiceDatabase(":memory:");
  return { store: new SqliteAuthStore(database), catalog: new SqliteCatalogStore({ database }) };
});

if (await requirePostgres("the PostgreSQL auth store")) {
  const postgres = postgresFixture("pg_auth");
  afterAll(() => postgres.drop());
  describeAuthStoreContract("postgres", async () => {
    const catalog = await postgres.open();
    return { store: catalog.auth, catalog: catalog.store, close: () => catalog.close() };
  });
}
