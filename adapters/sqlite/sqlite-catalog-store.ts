import type Database from "better-sqlite3";
import { SynchronousCatalogStore } from "../../src/catalog/synchronous-catalog-store.js";
import type { CatalogStore } from "../../src/catalog/types.js";
import { type Clock, systemClock } from "../../src/clock/clock.js";
import { SqliteChangeMarker } from "./change-marker.js";
import { openSluiceDatabase } from "./database.js";
import { databaseGate } from "./database-gate.js";
import { SqliteCatalogTables } from "./sqlite-catalog-tables.js";
import { guardedWrite } from "./sqlite-errors.js";

/**
 * Open a database file (the store owns and closes it), or share one opened with
 * `openSluiceDatabase` (migrated; the caller closes it).
 */
export type SqliteCatalogStoreOptions = ({ filename: string } | { database: Database.Database }) & {
  /** Source of `createdAt`/`updatedAt` for pools; default the system clock. */
  clock?: Clock;
};

/**
 * The persistent {@link CatalogStore} on SQLite (better-sqlite3, synchronous). Several
 * processes may share the file: writes that need a check first run in IMMEDIATE
 * transactions, and {@link SqliteCatalogStore.changeMarker} sees every process's commits.
 * A unit (`atomically`) is one IMMEDIATE transaction held across its awaits; other calls on
 * the same connection wait for it.
 *
 * @example
 * ```ts
 * const store = new SqliteCatalogStore({ filename: join(dataDir, "sluice.db") });
 * const team = await store.createTeam({ name: "Acme", slug: "acme" });
 * await store.close();
 * ```
 */
export class SqliteCatalogStore extends SynchronousCatalogStore {
  readonly database: Database.Database;
  private readonly ownsDatabase: boolean;
  private readonly marker: SqliteChangeMarker;
  private readonly sqlite: SqliteCatalogTables;

  constructor(options: SqliteCatalogStoreOptions) {
    const database =
      "filename" in options ? openSluiceDatabase(options.filename) : options.database;
    const marker = new SqliteChangeMarker(database);
    const tables = new SqliteCatalogTables(database, options.clock ?? systemClock, marker);
    super(tables, databaseGate(database));
    this.database = database;
    this.ownsDatabase = "filename" in options;
    this.marker = marker;
    this.sqlite = tables;
  }

  protected async runUnit<T>(body: (tx: CatalogStore) => Promise<T>): Promise<T> {
    guardedWrite("catalog", () => this.database.exec("BEGIN IMMEDIATE"));
    try {
      const result = await body(this.unitHandle());
      guardedWrite("catalog", () => this.database.exec("COMMIT"));
      return result;
    } catch (error) {
      // SQLite may have rolled back already (some errors end the transaction themselves).
      if (this.database.inTransaction) this.database.exec("ROLLBACK");
      throw error;
    } finally {
      this.marker.noteLocalWrite();
    }
  }

  /**
   * Changes whenever this store writes or any other connection (process) commits to the
   * file. It may also change for commits that touch no catalog row (metrics, token use
   * times); it never stays put across a catalog change.
   */
  async changeMarker(): Promise<number> {
    return this.marker.current();
  }

  /** Closes the database when the store opened it; a shared database is left to its owner. */
  async close(): Promise<void> {
    await this.gate.idle();
    this.sqlite.clear();
    if (this.ownsDatabase && this.database.open) this.database.close();
  }
}
