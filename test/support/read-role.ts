import { randomUUID } from "node:crypto";
import pg from "pg";
import { survivesLostConnections } from "../../adapters/postgres/survive-lost-connections.js";
import { createTestDatabase, type TestDatabase } from "./postgres.js";

/** A test database with a table of rows and a login role that may only read it. */
export interface ReadRoleDatabase {
  database: TestDatabase;
  /** The read role's name (unique per run: roles are cluster-wide). */
  role: string;
  /** Connection string of the read role (a password is set; the test server trusts anyway). */
  readUrl: string;
  /** Runs SQL as the database's owner (the admin user). */
  admin(sql: string, params?: unknown[]): Promise<pg.QueryResult>;
  /** Drops the database, then the role. */
  drop(): Promise<void>;
}

/**
 * Creates a database with table `items (id int, name text)` holding 3 rows, and a LOGIN
 * role with CONNECT, USAGE on schema public and SELECT on its tables, nothing else: no
 * TEMPORARY (revoked from PUBLIC), no CREATE.
 *
 * @example
 * ```ts
 * const fixture = await createReadRoleDatabase("pg_pools");
 * afterAll(() => fixture.drop());
 * ```
 */
export async function createReadRoleDatabase(suite: string): Promise<ReadRoleDatabase> {
  const database = await createTestDatabase(suite);
  const role = `sluice_reader_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  // pool.end() resolves before its connection has closed: the DROP … WITH (FORCE) that follows
  // may end that session, whose error then reaches the pool (an uncaught one without this).
  const admin = survivesLostConnections(new pg.Pool({ connectionString: database.url, max: 1 }));
  const run = (sql: string, params?: unknown[]) => admin.query(sql, params);
  await run(`CREATE ROLE ${role} LOGIN PASSWORD 'reader-secret-pw'`);
  await run(`REVOKE ALL ON DATABASE ${database.name} FROM PUBLIC`);
  await run(`GRANT CONNECT ON DATABASE ${database.name} TO ${role}`);
  await run("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
  await run(`GRANT USAGE ON SCHEMA public TO ${role}`);
  await run("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)");
  await run("INSERT INTO items VALUES (1, 'one'), (2, 'two'), (3, 'three')");
  await run(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
  const url = new URL(database.url);
  url.username = role;
  url.password = "reader-secret-pw";
  return {
    database,
    role,
    readUrl: url.toString(),
    admin: run,
    async drop() {
      await admin.end();
      await database.drop();
      const root = new pg.Client({ connectionString: database.url.replace(database.name, "test") });
      await root.connect();
      try {
        await root.query(`DROP ROLE IF EXISTS ${role}`);
      } finally {
        await root.end();
      }
    },
  };
}
