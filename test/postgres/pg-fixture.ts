import {
  openPostgresCatalog,
  type PostgresCatalog,
} from "../../adapters/postgres/open-postgres-catalog.js";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";

const TABLES =
  "teams, users, memberships, api_tokens, budgets, pools, pool_keys, metrics_buckets, access_log, " +
  "oauth_clients, oauth_grants, oauth_codes, oauth_tokens, user_passwords, sessions, sign_in_links, " +
  "sign_in_failures, setup_tokens";

/**
 * One database per test file, emptied for each test: `open()` gives a migrated catalog on it
 * with every table truncated.
 */
export function postgresFixture(suite: string): {
  open(clock?: ManualClock): Promise<PostgresCatalog>;
  database(): TestDatabase;
  drop(): Promise<void>;
} {
  let database: TestDatabase | null = null;
  return {
    async open(clock) {
      database ??= await createTestDatabase(suite);
      const catalog = await openPostgresCatalog({
        url: database.url,
        ...(clock ? { clock } : {}),
        timeoutMs: 5_000,
      });
      await catalog.pool.query(`TRUNCATE ${TABLES} RESTART IDENTITY CASCADE`);
      return catalog;
    },
    database() {
      if (!database) throw new Error("open() first");
      return database;
    },
    async drop() {
      await database?.drop();
    },
  };
}
