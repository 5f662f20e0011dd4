import type Database from "better-sqlite3";
import type { Statement } from "better-sqlite3";

/**
 * A number that changes whenever this connection writes (counted by {@link noteLocalWrite})
 * or any other connection, in this process or another, commits to the file.
 * `PRAGMA data_version` only reflects other connections' commits, hence the local counter.
 * Each observed change adds one, so the marker only grows and never repeats a value.
 *
 * @example
 * ```ts
 * const marker = new SqliteChangeMarker(db);
 * const seen = marker.current();
 * // … later, cheap enough to poll:
 * if (marker.current() !== seen) resync();
 * ```
 */
export class SqliteChangeMarker {
  private readonly dataVersion: Statement<[], number>;
  private lastDataVersion: number;
  private externalChanges = 0;
  private localChanges = 0;

  constructor(database: Database.Database) {
    this.dataVersion = database.prepare<[], number>("PRAGMA data_version").pluck();
    this.lastDataVersion = this.dataVersion.get() as number;
  }

  noteLocalWrite(): void {
    this.localChanges += 1;
  }

  current(): number {
    const dataVersion = this.dataVersion.get() as number;
    if (dataVersion !== this.lastDataVersion) {
      this.lastDataVersion = dataVersion;
      this.externalChanges += 1;
    }
    return this.externalChanges + this.localChanges;
  }
}
