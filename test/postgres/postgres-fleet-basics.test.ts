import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { connectPostgres } from "../../adapters/postgres/connect.js";
import { migratePostgres, POSTGRES_MIGRATIONS } from "../../adapters/postgres/migrations.js";
import { openPostgresCatalog } from "../../adapters/postgres/open-postgres-catalog.js";
import { emptyMetricCounts } from "../../src/metrics/types.js";
import { poolInput } from "../catalog/fixtures.js";
import { createTestDatabase, requirePostgres, type TestDatabase } from "../support/postgres.js";

const available = await requirePostgres("the PostgreSQL fleet basics");
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const database of databases) await database.drop();
});

async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase("pg_fleet");
  databases.push(database);
  return database;
}

describe.runIf(available)("several servers on one PostgreSQL database", () => {
  it("migrates exactly once when six servers start at the same moment", async () => {
    const { url } = await freshDatabase();
    const pools = await Promise.all(Array.from({ length: 6 }, () => connectPostgres(url)));
    try {
      const applied = await Promise.all(pools.map((pool) => migratePostgres(pool)));
      // Every version was applied by exactly one of them; the others found it done.
      expect(applied.flat().sort()).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
      const { rows } = await pools[0]!.query("SELECT version FROM schema_migrations ORDER BY 1");
      expect(rows.map((row) => row.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it("shows a catalog change made through one server to another within a second, by NOTIFY", async () => {
    const { url } = await freshDatabase();
    // The periodic read is pushed out of the test's reach: only the notification can tell.
    const writer = await openPostgresCatalog({ url, pollMs: 60_000 });
    const reader = await openPostgresCatalog({ url, pollMs: 60_000 });
    try {
      const before = await reader.store.changeMarker();
      const team = await writer.store.createTeam({ name: "A", slug: "a" });
      await writer.store.upsertPool(team.id, poolInput({ subdomain: "chat" }));
      const startedAt = Date.now();
      while ((await reader.store.changeMarker()) === before) {
        expect(Date.now() - startedAt).toBeLessThan(1_000);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect((await reader.store.findPoolBySubdomain("chat"))?.teamId).toBe(team.id);
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it("falls back to reading the version when notifications are lost", async () => {
    const { url } = await freshDatabase();
    const reader = await openPostgresCatalog({ url, pollMs: 100 });
    const before = await reader.store.changeMarker();
    // A write no NOTIFY reaches: the reader's LISTEN connection is killed first.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN sluice_catalog'",
      );
      await admin.query("INSERT INTO teams (name, slug) VALUES ('A', 'a')");
      const startedAt = Date.now();
      while ((await reader.store.changeMarker()) === before) {
        expect(Date.now() - startedAt).toBeLessThan(2_000);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await admin.end();
      await reader.close();
    }
  });

  it("adds up the metric counts of every server: none overwrites another's", async () => {
    const { url } = await freshDatabase();
    const servers = await Promise.all([0, 1, 2].map(() => openPostgresCatalog({ url })));
    try {
      const bucket = (requests: number) => ({
        pool: "chat",
        start: 60_000,
        ...emptyMetricCounts(),
        requests,
        holdMs: requests * 10,
      });
      await Promise.all(
        servers.flatMap((server, index) =>
          Array.from({ length: 5 }, () => server.metrics.addBuckets([bucket(index + 1)])),
        ),
      );
      const [stored] = await servers[0]!.metrics.loadBuckets(0);
      expect(stored).toMatchObject({ requests: 5 * (1 + 2 + 3), holdMs: 5 * 60 });
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });
});
