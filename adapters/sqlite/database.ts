import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { InvalidArgumentError } from "../../src/errors.js";
import { sqliteDriver } from "./driver.js";
import { makeDirectory } from "./make-directory.js";
import { MIGRATIONS, type Migration } from "./migrations.js";

/** Options of {@link openSluiceDatabase}. */
export interface OpenDatabaseOptions {
  /** How long a writer waits for another process's lock before failing (ms); default 5 000. */
  busyTimeoutMs?: number;
  /** Schema history to apply; default {@link MIGRATIONS}. */
  migrations?: readonly Migration[];
}

/**
 * Opens (creating when missing, with its directory) and migrates the Sluice database.
 * WAL lets readers in other processes run beside the single writer; `synchronous=NORMAL` is
 * durable across process crashes in WAL mode and only risks the last commits on power loss,
 * which the catalog tolerates far better than a fsync per key mint.
 *
 * @example
 * ```ts
 * const db = openSluiceDatabase(join(dataDir, "sluice.db"));
 * const catalog = new SqliteCatalogStore({ database: db });
 * const metrics = new SqliteMetricsStore(db);
 * ```
 */
export function openSluiceDatabase(
  filename: string,
  options: OpenDatabaseOptions = {},
): Database.Database {
  if (filename !== ":memory:" && filename !== "") makeDirectory(dirname(filename));
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  const db = new (sqliteDriver())(filename, { timeout: busyTimeoutMs });
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    migrate(db, options.migrations ?? MIGRATIONS);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * The schema version recorded in the database (0 for a new one).
 *
 * @example
 * ```ts
 * schemaVersion(openSluiceDatabase(file)) === LATEST_SCHEMA_VERSION; // true
 * ```
 */
export function schemaVersion(db: Database.Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}

/**
 * Applies every migration newer than the database's `user_version`, each in its own
 * IMMEDIATE transaction (taking the write lock before re-reading the version, so concurrent
 * starters apply each step once). Refuses a database written by a newer schema.
 *
 * @example
 * ```ts
 * migrate(db, MIGRATIONS); // no-op when already current
 * ```
 */
export function migrate(db: Database.Database, migrations: readonly Migration[]): void {
  checkMigrationOrder(migrations);
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  const current = schemaVersion(db);
  if (current > latest) {
    throw new InvalidArgumentError(
      `The database has schema version ${current}, newer than this Sluice supports (${latest}). Upgrade Sluice.`,
    );
  }
  if (current === latest) return;
  const applyOne = db.transaction((migration: Migration) => {
    if (schemaVersion(db) >= migration.version) return;
    if (typeof migration.up === "string") db.exec(migration.up);
    else migration.up(db);
    db.pragma(`user_version = ${migration.version}`);
  });
  for (const migration of migrations) {
    if (migration.version > current) applyOne.immediate(migration);
  }
}

function checkMigrationOrder(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new InvalidArgumentError(
        `Migration "${migration.name}" has version ${migration.version}; expected ${index + 1}.`,
      );
    }
  });
}
