import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { SqliteAccessLogStore } from "../../adapters/sqlite/access-log-store.js";
import { startBackgroundCheckpoints } from "../../adapters/sqlite/background-checkpoints.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { accessLogEntry } from "../lock-api/access-log-entry.js";
import { useWalDatabases } from "./wal-databases.js";

const { open, started, database, walBytes } = useWalDatabases();

/** `count` access-log rows, at distinct times from `from` on. */
function entries(from: number, count: number) {
  return Array.from({ length: count }, (_, i) =>
    accessLogEntry({ at: from + i, remoteAddress: `10.0.${i % 250}.${(from / count) % 250}` }),
  );
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("WAL checkpoints in a worker thread", () => {
  it("keep the WAL bounded while a server-like stream of batches goes on", async () => {
    const { db, wal } = database();
    const store = new SqliteAccessLogStore(db);
    started.push(startBackgroundCheckpoints(db, { intervalMs: 5, walSizeLimitBytes: 512 * 1024 }));
    let largest = 0;
    // 100 000 rows: a batch per event-loop turn, as the buffered log writes.
    for (let batch = 0; batch < 200; batch++) {
      await store.insert(entries(batch * 500, 500));
      largest = Math.max(largest, walBytes(wal));
      await nextTurn();
    }
    // Unbounded, it would reach about 12 MB.
    expect(largest).toBeLessThan(4 * 1024 * 1024);
    expect(db.prepare("SELECT count(*) AS n FROM access_log").get()).toEqual({ n: 100_000 });
  });

  it("the serving connection no longer checkpoints inside a commit", () => {
    const { db } = database();
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1_000);
    started.push(startBackgroundCheckpoints(db, { intervalMs: 60_000 }));
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
  });

  it("stop() leaves an empty WAL and every row in the database file", async () => {
    const { db, wal } = database();
    const store = new SqliteAccessLogStore(db);
    const checkpoints = startBackgroundCheckpoints(db, { intervalMs: 60_000 });
    for (let batch = 0; batch < 6; batch++) await store.insert(entries(batch * 1_000, 1_000));
    expect(walBytes(wal)).toBeGreaterThan(0);
    await checkpoints.stop();
    await checkpoints.stop();
    expect(walBytes(wal)).toBe(0);
    db.close();
    const reopened = openSluiceDatabase(db.name);
    open.push(reopened);
    expect(reopened.prepare("SELECT count(*) AS n FROM access_log").get()).toEqual({ n: 6_000 });
  });

  it("a crash loses only the entries still buffered: every flushed one is there after reopening", async () => {
    const { db } = database();
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(import.meta.dirname, "checkpointed-writer.ts"),
        db.name,
        "700",
        "50",
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = once(child, "exit");
    let ready = false;
    for await (const line of createInterface({ input: child.stdout })) {
      ready = line === "READY";
      if (ready) break;
    }
    // It got there: the flush ended with the process alive (waiting for a checkpoint held it).
    expect(ready).toBe(true);
    child.kill("SIGKILL");
    await exited;
    expect(db.prepare("SELECT count(*) AS n FROM access_log").get()).toEqual({ n: 700 });
  });
});
