import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteCatalogStore } from "../../adapters/sqlite/sqlite-catalog-store.js";
import { describeCatalogStoreContract } from "../catalog/catalog-store-contract.js";
import { poolInput } from "../catalog/fixtures.js";
import { tempDirs } from "./temp-dir.js";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

describeCatalogStoreContract(
  "sqlite",
  (clock) => new SqliteCatalogStore({ filename: join(dirs.make(), "sluice.db"), clock }),
);

describe("SqliteCatalogStore.atomically", () => {
  it("shows another process all of a body's writes or none, and none when it throws", () => {
    const filename = join(dirs.make(), "sluice.db");
    const writer = new SqliteCatalogStore({ filename });
    const reader = new SqliteCatalogStore({ filename });
    try {
      const team = writer.createTeam({ name: "A", slug: "a" });
      const seenMidway = writer.atomically(() => {
        writer.upsertBudget(team.id, { name: "b", originMaxConcurrent: 4 });
        writer.upsertPool(team.id, poolInput({ subdomain: "chat" }));
        return [reader.listBudgets(team.id).length, reader.listPools(team.id).length];
      });
      expect(seenMidway).toEqual([0, 0]);
      expect(reader.listBudgets(team.id)).toHaveLength(1);
      expect(reader.listPools(team.id)).toHaveLength(1);

      expect(() =>
        writer.atomically(() => {
          writer.upsertBudget(team.id, { name: "c", originMaxConcurrent: 1 });
          throw new Error("plan refused");
        }),
      ).toThrow("plan refused");
      expect(reader.listBudgets(team.id).map((budget) => budget.name)).toEqual(["b"]);
    } finally {
      writer.close();
      reader.close();
    }
  });
});
