import pg from "pg";
import { describe, expect, it } from "vitest";
import { createTestDatabase, requirePostgres } from "./postgres.js";

const available = await requirePostgres("the PostgreSQL test harness");

describe.runIf(available)("createTestDatabase", () => {
  it("gives each caller an empty database of its own and drops it", async () => {
    const first = await createTestDatabase("harness");
    const second = await createTestDatabase("harness");
    expect(first.name).not.toBe(second.name);
    const client = new pg.Client({ connectionString: first.url });
    await client.connect();
    await client.query("CREATE TABLE t (x int)");
    await client.end();
    const other = new pg.Client({ connectionString: second.url });
    await other.connect();
    const { rows } = await other.query(
      "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 't'",
    );
    await other.end();
    expect(rows[0].n).toBe(0);
    await first.drop();
    await second.drop();
    const admin = new pg.Client({ connectionString: first.url.replace(first.name, "test") });
    await admin.connect();
    const left = await admin.query(
      "SELECT count(*)::int AS n FROM pg_database WHERE datname = $1",
      [first.name],
    );
    await admin.end();
    expect(left.rows[0].n).toBe(0);
  });
});
