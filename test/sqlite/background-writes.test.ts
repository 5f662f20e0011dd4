import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createSqliteAccessLog } from "../../adapters/sqlite/access-log-store.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteMetricsStore } from "../../adapters/sqlite/sqlite-metrics-store.js";
import { StoreUnavailableError } from "../../src/errors.js";
import { emptyMetricCounts } from "../../src/metrics/types.js";
import { accessLogEntry } from "../lock-api/access-log-entry.js";
import { tempDirs } from "./temp-dir.js";

const dirs = tempDirs();
const open: Database.Database[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) db.close();
  dirs.cleanup();
});

/** Two connections to one database file, as two processes (a server and the CLI) have. */
function twoConnections(): { server: Database.Database; other: Database.Database } {
  const filename = join(dirs.make(), "sluice.db");
  const server = openSluiceDatabase(filename);
  const other = openSluiceDatabase(filename);
  open.push(server, other);
  return { server, other };
}

/** Runs `write` and answers how long it blocked the (synchronous) caller. */
/** How long `write` takes; better-sqlite3 blocks the event loop for all of it. */
async function blockedMs(write: () => Promise<unknown>): Promise<number> {
  const startedAt = performance.now();
  await write();
  return performance.now() - startedAt;
}

// The connection's own busy timeout is 5 s: a background write that honoured it would stall
// the server's event loop (lock and proxy traffic too) for that long.
describe("background SQLite writes while another process holds the write lock", () => {
  it("an access-log flush gives up at once, keeps its entries, and writes them later", async () => {
    const { server, other } = twoConnections();
    const errors: unknown[] = [];
    const accessLog = createSqliteAccessLog(server, { onError: (error) => errors.push(error) });
    accessLog.append(accessLogEntry({ at: 1_000 }));
    other.exec("BEGIN IMMEDIATE");
    expect(await blockedMs(() => accessLog.flush())).toBeLessThan(1_000);
    expect(errors[0]).toBeInstanceOf(StoreUnavailableError);
    other.exec("COMMIT");
    expect(await accessLog.list("llm", { from: 0 })).toHaveLength(1);
    expect(server.pragma("busy_timeout", { simple: true })).toBe(5_000);
    await accessLog.close();
  });

  it("a metrics save or prune fails fast with StoreUnavailableError; the connection keeps its timeout", async () => {
    const { server, other } = twoConnections();
    const metrics = new SqliteMetricsStore(server);
    other.exec("BEGIN IMMEDIATE");
    const bucket = { pool: "llm", start: 60_000, ...emptyMetricCounts(), requests: 1 };
    let thrown: unknown;
    const took = await blockedMs(async () => {
      try {
        await metrics.saveBuckets([bucket]);
      } catch (error) {
        thrown = error;
      }
    });
    expect(thrown).toBeInstanceOf(StoreUnavailableError);
    expect(took).toBeLessThan(1_000);
    await expect(metrics.pruneBefore(0)).rejects.toThrow(StoreUnavailableError);
    expect(server.pragma("busy_timeout", { simple: true })).toBe(5_000);
    other.exec("COMMIT");
    await metrics.saveBuckets([bucket]);
    expect(await metrics.loadBuckets(0)).toHaveLength(1);
  });
});
