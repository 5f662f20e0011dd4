import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach } from "vitest";
import type { BackgroundCheckpoints } from "../../adapters/sqlite/background-checkpoints.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { tempDirs } from "./temp-dir.js";

/** What {@link useWalDatabases} gives a test file. */
export interface WalDatabases {
  /** Databases to close after the test (reopened ones too). */
  open: Database.Database[];
  /** Checkpointers to stop after the test, before their databases close. */
  started: BackgroundCheckpoints[];
  /** A new database file, and the path of its write-ahead log. */
  database(): { db: Database.Database; wal: string };
  /** The log's size in bytes (0 when there is none). */
  walBytes(wal: string): number;
}

/**
 * Sluice databases on disk for checkpoint tests, closed (checkpoints stopped first) and
 * removed after each test. Call at the top of a test file.
 *
 * @example
 * ```ts
 * const wal = useWalDatabases();
 * const { db, wal: file } = wal.database();
 * wal.started.push(startBackgroundCheckpoints(db));
 * ```
 */
export function useWalDatabases(): WalDatabases {
  const dirs = tempDirs();
  const open: Database.Database[] = [];
  const started: BackgroundCheckpoints[] = [];
  afterEach(async () => {
    for (const checkpoints of started.splice(0)) await checkpoints.stop();
    for (const db of open.splice(0)) if (db.open) db.close();
    dirs.cleanup();
  });
  return {
    open,
    started,
    database() {
      const filename = join(dirs.make(), "sluice.db");
      const db = openSluiceDatabase(filename);
      open.push(db);
      return { db, wal: `${filename}-wal` };
    },
    walBytes: (wal) => (existsSync(wal) ? statSync(wal).size : 0),
  };
}
