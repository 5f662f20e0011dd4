import { randomUUID } from "node:crypto";
import pg from "pg";

/** The PostgreSQL server the tests use (the machines run one with trust auth, database `test`). */
export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2_000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Whether a real PostgreSQL answers at {@link DATABASE_URL}. Under CI a missing server fails the
 * run; locally the suite is skipped with a loud warning.
 */
export async function requirePostgres(suite: string): Promise<boolean> {
  if (await postgresAnswers()) return true;
  const message = `PostgreSQL does not answer at ${DATABASE_URL}: ${suite} cannot run.`;
  if (process.env.CI === "true") throw new Error(message);
  console.warn(`\n!!! ${message} Skipping (start PostgreSQL or set DATABASE_URL). !!!\n`);
  return false;
}

/** A database of its own for one test file, and how to drop it. */
export interface TestDatabase {
  /** Connection string of the new database (same server and user as {@link DATABASE_URL}). */
  url: string;
  name: string;
  /** Drops the database, ending any connection still open to it. */
  drop(): Promise<void>;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Creates an empty database named `sluice_test_<suite>_<random>` so test files running in
 * parallel (or two worktrees on one machine) never share tables.
 *
 * @example
 * ```ts
 * const db = await createTestDatabase("pg_catalog");
 * const store = await openPostgresCatalogStore(db.url);
 * afterAll(() => db.drop());
 * ```
 */
export async function createTestDatabase(suite: string): Promise<TestDatabase> {
  const safeSuite = suite
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_")
    .slice(0, 30);
  const name = `sluice_test_${safeSuite}_${randomUUID().replaceAll("-", "").slice(0, 10)}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
