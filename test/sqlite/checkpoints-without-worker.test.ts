import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteAccessLogStore } from "../../adapters/sqlite/access-log-store.js";
import {
  type BackgroundCheckpointOptions,
  startBackgroundCheckpoints,
} from "../../adapters/sqlite/background-checkpoints.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { accessLogEntry } from "../lock-api/access-log-entry.js";
import { useWalDatabases } from "./wal-databases.js";

const { open, started, database, walBytes } = useWalDatabases();

/** Node itself refuses to start the thread: the Worker constructor throws. */
const refusedWorker: BackgroundCheckpointOptions["startWorker"] = (source, options) =>
  new Worker(source, { ...options, execArgv: ["--no-such-flag"] });

/** The thread starts but cannot load the SQLite driver, and exits with an error. */
const driverlessWorker: BackgroundCheckpointOptions["startWorker"] = (source, options) =>
  new Worker(source, {
    ...options,
    workerData: { ...options.workerData, driverUrl: "file:///nowhere/better-sqlite3.js" },
  });

/** 100 000 access-log rows in batches, a turn apart; the largest WAL seen on the way. */
async function writeStream(db: Database.Database, wal: string): Promise<number> {
  const store = new SqliteAccessLogStore(db);
  let largest = 0;
  for (let batch = 0; batch < 200; batch++) {
    const rows = Array.from({ length: 500 }, (_, i) =>
      accessLogEntry({ at: batch * 500 + i, remoteAddress: `10.0.${i % 250}.${batch % 250}` }),
    );
    await store.insert(rows);
    largest = Math.max(largest, walBytes(wal));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return largest;
}

describe("WAL checkpoints when the worker thread is unavailable", () => {
  it("a worker Node refuses to start leaves them to the connection, which keeps the WAL bounded", async () => {
    const { db, wal } = database();
    const errors: string[] = [];
    const checkpoints = startBackgroundCheckpoints(db, {
      intervalMs: 5,
      walSizeLimitBytes: 512 * 1024,
      startWorker: refusedWorker,
      onError: (error) => errors.push(error.message),
    });
    started.push(checkpoints);
    expect(errors).toEqual([
      expect.stringMatching(/^The checkpoint worker could not start \(.*--no-such-flag\)/),
    ]);
    expect(checkpoints.runsIn()).toBe("connection");
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1_000);

    const largest = await writeStream(db, wal);
    // Unchecked, it would reach about 12 MB; SQLite checkpoints every 1000 pages (4 MB).
    expect(largest).toBeLessThan(6 * 1024 * 1024);
    expect(walBytes(wal)).toBeLessThan(largest);
    const result = await checkpoints.nextCheckpoint();
    expect(result.busy).toBe(0);
    expect(result.checkpointed).toBe(result.log);

    await checkpoints.stop();
    await checkpoints.stop();
    expect(walBytes(wal)).toBe(0);
    db.close();
    const reopened = openSluiceDatabase(db.name);
    open.push(reopened);
    expect(reopened.prepare("SELECT count(*) AS n FROM access_log").get()).toEqual({ n: 100_000 });
  });

  it("a worker that dies at start hands them back to the connection, and nothing waits for it", async () => {
    const { db, wal } = database();
    const errors: string[] = [];
    let exited = () => {};
    const exit = new Promise<void>((resolve) => {
      exited = resolve;
    });
    const checkpoints = startBackgroundCheckpoints(db, {
      intervalMs: 5,
      walSizeLimitBytes: 512 * 1024,
      startWorker: driverlessWorker,
      onError: (error) => {
        errors.push(error.message);
        if (error.message.startsWith("The checkpoint worker exited")) exited();
      },
    });
    started.push(checkpoints);
    await exit;
    expect(errors).toEqual([
      expect.stringMatching(/better-sqlite3/),
      "The checkpoint worker exited (code 1): the connection checkpoints inside its commits.",
    ]);
    expect(checkpoints.runsIn()).toBe("connection");
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1_000);

    const largest = await writeStream(db, wal);
    expect(largest).toBeLessThan(6 * 1024 * 1024);
    expect(walBytes(wal)).toBeLessThan(largest);
    // Resolves although no worker will ever report one.
    const result = await checkpoints.nextCheckpoint();
    expect(result.checkpointed).toBe(result.log);

    await checkpoints.stop();
    expect(walBytes(wal)).toBe(0);
    db.close();
    const reopened = openSluiceDatabase(db.name);
    open.push(reopened);
    expect(reopened.prepare("SELECT count(*) AS n FROM access_log").get()).toEqual({ n: 100_000 });
  });

  it("with the worker running, checkpoints run there and stop() closes it", async () => {
    const { db, wal } = database();
    const checkpoints = startBackgroundCheckpoints(db, { intervalMs: 5 });
    started.push(checkpoints);
    expect(checkpoints.runsIn()).toBe("worker");
    await new SqliteAccessLogStore(db).insert([accessLogEntry()]);
    expect((await checkpoints.nextCheckpoint()).log).toBeGreaterThan(0);
    await checkpoints.stop();
    expect(walBytes(wal)).toBe(0);
    expect(checkpoints.runsIn()).toBe("connection");
    db.close();
  });
});
