import type BetterSqlite3 from "better-sqlite3";
import { optionalPackage } from "../packages/optional-package.js";

/**
 * better-sqlite3, loaded on first use: it is an optional dependency (a native build), so
 * importing the SQLite adapter, or the CLI, never fails where it is not installed; opening a
 * database then says which package to install.
 *
 * @example
 * ```ts
 * const Database = sqliteDriver();
 * const db = new Database(":memory:");
 * ```
 */
export function sqliteDriver(): typeof BetterSqlite3 {
  return optionalPackage<typeof BetterSqlite3>(
    "better-sqlite3",
    "The SQLite catalog and metrics store",
  );
}
