import { join } from "node:path";
import { afterEach } from "vitest";
import { SqliteCatalogStore } from "../../adapters/sqlite/sqlite-catalog-store.js";
import { describeCatalogStoreContract } from "../catalog/catalog-store-contract.js";
import { tempDirs } from "./temp-dir.js";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

describeCatalogStoreContract(
  "sqlite",
  (clock) => new SqliteCatalogStore({ filename: join(dirs.make(), "sluice.db"), clock }),
);
