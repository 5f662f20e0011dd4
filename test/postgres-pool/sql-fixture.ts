import { afterAll, beforeAll } from "vitest";
import { PostgresPools } from "../../adapters/postgres-pool/postgres-pools.js";
import { POOL_DATABASE_DEFAULTS } from "../../src/catalog/pool-database.js";
import type { PoolDatabaseRecord, PoolInput, PoolRecord } from "../../src/catalog/types.js";
import { systemClock } from "../../src/clock/clock.js";
import { createHarness, type Harness, POOL_DOMAIN } from "../lock-api/harness.js";
import { type PoolReply, poolRequest } from "../proxy/client.js";
import { requirePostgres } from "../support/postgres.js";
import { createReadRoleDatabase, type ReadRoleDatabase } from "../support/read-role.js";

/** What {@link useSqlFixture} gives a test file (shared by its tests). */
export interface SqlFixture {
  h: Harness;
  db: ReadRoleDatabase;
  /** Adds a postgres pool reading `db` as its read role (override the limits), and a key. */
  addDatabasePool(
    subdomain: string,
    overrides?: Partial<PoolInput>,
    database?: Partial<Omit<PoolDatabaseRecord, "connectionString">> & { url?: string },
  ): Promise<{ pool: PoolRecord; key: string }>;
  /** POST /sql (or another path/method) on a pool host with the key as a bearer token. */
  send(
    subdomain: string,
    key: string | null,
    body: unknown,
    init?: { method?: string; path?: string; headers?: Record<string, string> },
  ): Promise<PoolReply>;
}

/** Whether the machine's PostgreSQL answers (tests skip, loudly, when it does not; CI fails). */
export const postgresUp = await requirePostgres("postgres pools");

/**
 * Registers `beforeAll`/`afterAll` for a file of SQL tests: a database with a read role
 * (`test/support/read-role.ts`), and the harness's proxy serving postgres pools through
 * real node-postgres pools, on the system clock (statement timeouts are real time).
 */
export function useSqlFixture(
  suite: string,
  options: { bodyLimitBytes?: number; corsOrigins?: readonly string[] } = {},
): SqlFixture {
  const fixture = {} as SqlFixture;
  beforeAll(async () => {
    fixture.db = await createReadRoleDatabase(suite);
    fixture.h = await createHarness({
      clock: systemClock,
      sql: { runner: new PostgresPools(), ...options },
    });
    fixture.addDatabasePool = async (subdomain, overrides = {}, database = {}) => {
      const { url = fixture.db.readUrl, ...limits } = database;
      const pool = await fixture.h.addPool({
        subdomain,
        backend: "postgres",
        origin: "postgresql://127.0.0.1:5432/db",
        maxConcurrent: 2,
        queueSize: 0,
        allowAuthorizationHeader: true,
        database: fixture.h.catalog.sealDatabase(url, { ...POOL_DATABASE_DEFAULTS, ...limits }),
        ...overrides,
      });
      return { pool, key: (await fixture.h.mintKey(subdomain)).plaintext };
    };
    fixture.send = (subdomain, key, body, init = {}) =>
      poolRequest(fixture.h.proxy.port, {
        host: `${subdomain}.${POOL_DOMAIN}`,
        method: init.method ?? "POST",
        path: init.path ?? "/sql",
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...init.headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
  });
  afterAll(async () => {
    await fixture.h?.close();
    await fixture.db?.drop();
  });
  return fixture;
}

/**
 * Sessions of the fixture's read role on the database: all of them, and those running a
 * `SELECT pg_sleep…` statement right now.
 */
export async function roleSessions(
  db: ReadRoleDatabase,
): Promise<{ total: number; sleeping: number }> {
  const result = await db.admin(
    "SELECT count(*)::int AS total, count(*) FILTER (WHERE query LIKE 'SELECT pg_sleep%' AND state = 'active')::int AS sleeping FROM pg_stat_activity WHERE usename = $1",
    [db.role],
  );
  return result.rows[0];
}
