import type pg from "pg";
import { type Clock, systemClock } from "../../src/clock/clock.js";
import { PostgresChangeWatch } from "./change-watch.js";
import { type ConnectPostgresOptions, connectPostgres } from "./connect.js";
import { migratePostgres } from "./migrations.js";
import { PostgresAccessLogStore } from "./postgres-access-log-store.js";
import { PostgresAuthStore } from "./postgres-auth-store.js";
import { PostgresCatalogStore } from "./postgres-catalog-store.js";
import { PostgresMetricsStore } from "./postgres-metrics-store.js";
import { PostgresOAuthStore } from "./postgres-oauth-store.js";

/** Options of {@link openPostgresCatalog}. */
export interface OpenPostgresCatalogOptions extends ConnectPostgresOptions {
  /** `postgres://user:password@host:port/database` */
  url: string;
  clock?: Clock;
  /** How often the catalog version is read besides LISTEN/NOTIFY (ms); default 1 000. */
  pollMs?: number;
}

/** A migrated PostgreSQL database: the catalog, metrics, access-log, OAuth and sign-in stores on one pool. */
export interface PostgresCatalog {
  readonly pool: pg.Pool;
  readonly store: PostgresCatalogStore;
  readonly metrics: PostgresMetricsStore;
  readonly accessLog: PostgresAccessLogStore;
  /** The MCP endpoint's OAuth grants and tokens, shared by the fleet. */
  readonly oauth: PostgresOAuthStore;
  /** The dashboard's passwords, sessions and sign-in links, shared by the fleet. */
  readonly auth: PostgresAuthStore;
  /** Migration versions this open applied (empty when another server had, or none were due). */
  readonly migrated: number[];
  /** Calls `listener` whenever any server changes the catalog; returns how to stop. */
  onChange(listener: () => void): () => void;
  /** Stops listening and ends the pool (also `store.close()`). */
  close(): Promise<void>;
}

/**
 * Connects (waiting while PostgreSQL is down), migrates (once across servers starting at
 * once), starts listening for catalog changes, and returns the stores.
 *
 * @example
 * ```ts
 * const catalog = await openPostgresCatalog({ url: process.env.SLUICE_DATABASE_URL!, log: console.log });
 * const pools = await catalog.store.listAllPools();
 * await catalog.close();
 * ```
 */
export async function openPostgresCatalog(
  options: OpenPostgresCatalogOptions,
): Promise<PostgresCatalog> {
  const pool = await connectPostgres(options.url, options);
  try {
    const migrated = await migratePostgres(pool);
    const watch = new PostgresChangeWatch(pool, {
      url: options.url,
      ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
      ...(options.log === undefined ? {} : { log: options.log }),
    });
    await watch.start();
    let closing: Promise<void> | null = null;
    const close = () => {
      closing ??= watch.stop().then(() => pool.end());
      return closing;
    };
    const store = new PostgresCatalogStore({
      pool,
      clock: options.clock ?? systemClock,
      watch,
      close,
    });
    return {
      pool,
      store,
      metrics: new PostgresMetricsStore(pool),
      accessLog: new PostgresAccessLogStore(pool),
      oauth: new PostgresOAuthStore(pool),
      auth: new PostgresAuthStore(pool),
      migrated,
      onChange: (listener) => watch.onChange(listener),
      close,
    };
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}
