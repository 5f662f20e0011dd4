import { join } from "node:path";
import { afterAll, afterEach } from "vitest";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteMetricsStore } from "../../adapters/sqlite/sqlite-metrics-store.js";
import { postgresFixture } from "../postgres/pg-fixture.js";
import { tempDirs } from "../sqlite/temp-dir.js";
import { requirePostgres } from "../support/postgres.js";
import { describeMetricsStoreContract } from "./metrics-store-contract.js";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

describeMetricsStoreContract("sqlite", async () => {
  const database = openSluiceDatabase(join(dirs.make(), "sluice.db"));
  return {
    store: new SqliteMetricsStore(database),
    close: async () => {
      database.close();
    },
  };
});

if (await requirePostgres("the PostgreSQL metrics store")) {
  const postgres = postgresFixture("pg_metrics");
  afterAll(() => postgres.drop());
  describeMetricsStoreContract("postgres", async () => {
    const catalog = await postgres.open();
    return { store: catalog.metrics, close: () => catalog.close() };
  });
}
