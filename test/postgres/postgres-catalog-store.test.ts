import { afterAll, describe } from "vitest";
import { describeCatalogStoreContract } from "../catalog/catalog-store-contract.js";
import { requirePostgres } from "../support/postgres.js";
import { postgresFixture } from "./pg-fixture.js";

const available = await requirePostgres("the PostgreSQL catalog store");
const fixture = postgresFixture("pg_catalog");
afterAll(() => fixture.drop());

describe.runIf(available)("PostgresCatalogStore", () => {
  describeCatalogStoreContract("postgres", async (clock) => (await fixture.open(clock)).store);
});
