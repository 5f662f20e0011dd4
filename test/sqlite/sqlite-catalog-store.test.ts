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
  it("shows another process all of a body's writes or none, and none when it throws", async () => {
    const filename = join(dirs.make(), "sluice.db");
    const writer = new SqliteCatalogStore({ filename });
    const reader = new SqliteCatalogStore({ filename });
    try {
      const team = await writer.createTeam({ name: "A", slug: "a" });
      const seenMidway = await writer.atomically(async (tx) => {
        await tx.upsertBudget(team.id, { name: "b", originMaxConcurrent: 4 });
        await tx.upsertPool(team.id, poolInput({ subdomain: "chat" }));
        return [
          (await reader.listBudgets(team.id)).length,
          (await reader.listPools(team.id)).length,
        ];
      });
      expect(seenMidway).toEqual([0, 0]);
      expect(await reader.listBudgets(team.id)).toHaveLength(1);
      expect(await reader.listPools(team.id)).toHaveLength(1);

      await expect(
        writer.atomically(async (tx) => {
          await tx.upsertBudget(team.id, { name: "c", originMaxConcurrent: 1 });
          throw new Error("plan refused");
        }),
      ).rejects.toThrow("plan refused");
      expect((await reader.listBudgets(team.id)).map((budget) => budget.name)).toEqual(["b"]);
    } finally {
      await writer.close();
      await reader.close();
    }
  });
});
