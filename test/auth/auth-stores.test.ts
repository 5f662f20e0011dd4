import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteAuthStore } from "../../adapters/sqlite/sqlite-auth-store.js";
import { SqliteCatalogStore } from "../../adapters/sqlite/sqlite-catalog-store.js";
import { MemoryAuthStore } from "../../src/auth/memory-auth-store.js";
import { MemoryCatalogStore } from "../../src/catalog/memory-catalog-store.js";
import { describeAuthStoreContract } from "./auth-store-contract.js";

describeAuthStoreContract("memory", async () => ({
  store: new MemoryAuthStore(),
  catalog: new MemoryCatalogStore(),
}));

describeAuthStoreContract("sqlite", async () => {
  const database = openSluiceDatabase(":memory:");
  return { store: new SqliteAuthStore(database), catalog: new SqliteCatalogStore({ database }) };
});
