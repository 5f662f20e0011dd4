import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connectPostgres } from "../../adapters/postgres/connect.js";
import { survivesLostConnections } from "../../adapters/postgres/survive-lost-connections.js";
import {
  createTestDatabase,
  DATABASE_URL,
  requirePostgres,
  type TestDatabase,
} from "../support/postgres.js";

const available = await requirePostgres("lost PostgreSQL connections");

/** Ends every session of `database` but the asking one, as a restart or an operator would. */
async function terminateSessions(database: string): Promise<void> {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [database],
    );
  } finally {
    await admin.end();
  }
}

describe.runIf(available)("a checked-out connection the server ends", () => {
  let db: TestDatabase;
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  beforeAll(async () => {
    db = await createTestDatabase("lost_connections");
    process.on("uncaughtException", record);
  });
  afterEach(() => {
    uncaught.length = 0;
  });
  afterAll(async () => {
    process.off("uncaughtException", record);
    await db?.drop();
  });

  /** Checks out a client, ends its session between two queries, and asks it again. */
  async function loseCheckedOut(pool: pg.Pool): Promise<unknown> {
    const client = await pool.connect();
    await client.query("BEGIN");
    await terminateSessions(db.name);
    // The server's goodbye reaches the socket while no query runs on it.
    await sleep(200);
    const next = await client.query("SELECT 1").then(
      () => null,
      (error: unknown) => error,
    );
    client.release(true);
    return next;
  }

  it("the catalog's pool: the unit's next query fails, the process goes on, the pool serves again", async () => {
    const pool = await connectPostgres(db.url, { max: 2 });
    try {
      expect(await loseCheckedOut(pool)).toBeInstanceOf(Error);
      expect(uncaught).toEqual([]);
      expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it("a pool guarded the same way as each postgres pool's (PostgresPools)", async () => {
    const pool = survivesLostConnections(new pg.Pool({ connectionString: db.url, max: 1 }));
    try {
      expect(await loseCheckedOut(pool)).toBeInstanceOf(Error);
      expect(uncaught).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  it("an unguarded pool is what crashed: its checked-out client's error has no listener", async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    const client = await pool.connect();
    try {
      // The hazard the guard exists for; if node-postgres starts listening itself, drop the guard.
      expect(client.listenerCount("error")).toBe(0);
    } finally {
      client.release();
      await pool.end();
    }
  });
});
