import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";
import type Database from "better-sqlite3";
import { databaseGate } from "./database-gate.js";

/** Options of {@link startBackgroundCheckpoints}. */
export interface BackgroundCheckpointOptions {
  /** How often the worker checkpoints the WAL (ms); default 250. */
  intervalMs?: number;
  /**
   * The WAL file is cut back to this size when it restarts (bytes); a WAL that holds more
   * gets a TRUNCATE checkpoint instead of a PASSIVE one. Default 4 MiB.
   */
  walSizeLimitBytes?: number;
  /**
   * Called when the worker fails (it then stops, and the connection checkpoints inside its
   * commits again, as SQLite does by default) or a checkpoint fails.
   */
  onError?: (error: Error) => void;
  /**
   * Starts the worker thread (default `new Worker(source, options)`). Where a worker cannot
   * start (it throws, or exits before its first checkpoint), the connection checkpoints
   * inside its commits instead and `onError` hears why: a host that forbids threads, or a
   * test of that fallback.
   */
  startWorker?: (source: string, options: WorkerOptions) => Worker;
}

/** What one PASSIVE checkpoint reported (SQLite's `wal_checkpoint` row). */
export interface CheckpointResult {
  /** 1 when another connection held a lock the checkpoint needed. */
  busy: number;
  /** Frames in the WAL. */
  log: number;
  /** Frames copied into the database file (all of them: the next write restarts the WAL). */
  checkpointed: number;
}

/** A running checkpoint worker; see {@link startBackgroundCheckpoints}. */
export interface BackgroundCheckpoints {
  /**
   * Resolves with the result of the worker's next checkpoint (for tests and shutdown); with
   * no worker, of a PASSIVE checkpoint run on the connection at once.
   */
  nextCheckpoint(): Promise<CheckpointResult>;
  /**
   * Where checkpoints run: `"worker"`, or `"connection"` (inside its commits, SQLite's
   * default) once the worker could not start or has stopped.
   */
  runsIn(): "worker" | "connection";
  /**
   * Stops the worker, then checkpoints (TRUNCATE) on `database`, so a clean shutdown leaves
   * an empty WAL. Call it before closing `database`. Safe to call twice.
   */
  stop(): Promise<void>;
}

// Run by `eval`: no worker file to find next to a bundle, a test's TS source or dist/.
// Dynamic imports only, so it runs as a CommonJS script or as a module (`--input-type`). It
// opens its own connection: a checkpoint there never runs on the event loop.
const WORKER_SOURCE = `
import("node:worker_threads").then(async ({ parentPort, workerData }) => {
  const Database = (await import(workerData.driverUrl)).default;
  const db = new Database(workerData.filename, { fileMustExist: true, timeout: 0 });
  db.pragma("busy_timeout = 0");
  db.pragma("wal_autocheckpoint = 0");
  const pageSize = db.pragma("page_size", { simple: true });
  let truncate = false;
  parentPort.on("message", (message) => {
    if (message === "stop") {
      db.close();
      parentPort.close();
      return;
    }
    try {
      const result = db.pragma(truncate ? "wal_checkpoint(TRUNCATE)" : "wal_checkpoint(PASSIVE)")[0];
      truncate = result.log * pageSize > workerData.walSizeLimitBytes;
      parentPort.postMessage({ result });
    } catch (error) {
      parentPort.postMessage({ error: String(error && error.message) });
    }
  });
});
`;

const running = new WeakMap<Database.Database, () => Promise<void> | null>();

/**
 * Resolves when `database` may be written without running into its background checkpoint:
 * no checkpoint under way, and the connection's {@link databaseGate} idle. A commit that
 * starts while a checkpoint copies the WAL cannot restart the WAL, so a steady stream of
 * such commits would let it grow; buffered writes (the access log) wait here instead.
 *
 * @example
 * ```ts
 * await checkpointFreeWindow(db);
 * insertBatch(entries); // synchronous: no checkpoint starts before it ends
 * ```
 */
export async function checkpointFreeWindow(database: Database.Database): Promise<void> {
  for (;;) {
    await databaseGate(database).idle();
    // Checked after the last await: nothing else runs before the caller's synchronous write.
    const checkpoint = running.get(database)?.();
    if (!checkpoint) return;
    await checkpoint;
  }
}

/**
 * Keeps SQLite's WAL checkpoints off the event loop. A commit that crosses the
 * auto-checkpoint threshold copies the WAL into the database file inside that commit (tens
 * of ms on a slow disk, every request waiting). This turns that off on `database` and has a
 * worker thread, with its own connection on the same file, run a PASSIVE checkpoint every
 * `intervalMs` instead: it never waits for a lock, and once it has copied every frame the
 * next commit restarts the WAL from its start, unless that commit began while a checkpoint
 * ran ({@link checkpointFreeWindow} keeps the buffered writes out of that window). A WAL
 * that still grew past `walSizeLimitBytes` (other writers, readers in other processes) gets
 * a TRUNCATE checkpoint instead, which empties it between two commits if it can take the
 * write lock without waiting, so it stays bounded.
 *
 * @example
 * ```ts
 * const checkpoints = startBackgroundCheckpoints(db, { intervalMs: 250 });
 * // … on shutdown, after the last write:
 * await checkpoints.stop();
 * db.close();
 * ```
 */
export function startBackgroundCheckpoints(
  database: Database.Database,
  options: BackgroundCheckpointOptions = {},
): BackgroundCheckpoints {
  const walSizeLimitBytes = options.walSizeLimitBytes ?? 4 * 1024 * 1024;
  database.pragma(`journal_size_limit = ${walSizeLimitBytes}`);
  const onError = options.onError ?? (() => {});
  const startWorker = options.startWorker ?? ((source, settings) => new Worker(source, settings));
  let worker: Worker;
  try {
    worker = startWorker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driverUrl: pathToFileURL(createRequire(import.meta.url).resolve("better-sqlite3")).href,
        filename: database.name,
        walSizeLimitBytes,
      },
    });
  } catch (error) {
    // SQLite's own checkpoints (wal_autocheckpoint, left on) keep the WAL bounded.
    onError(
      new Error(
        `The checkpoint worker could not start (${(error as Error).message}): the connection checkpoints inside its commits.`,
      ),
    );
    return connectionCheckpoints(database);
  }
  const ownAutocheckpoint = Number(database.pragma("wal_autocheckpoint", { simple: true }));
  database.pragma("wal_autocheckpoint = 0");
  // Holds the process open only while a checkpoint runs or someone waits for one: a write
  // waiting for the checkpoint to end must not see the process exit under it.
  const hold = (on: boolean) => {
    if (on) worker.ref();
    else worker.unref();
  };
  // The server's exit must not wait for the checkpointer.
  hold(false);
  let inProgress: Promise<void> | null = null;
  let finish = () => {};
  let dead = false;
  let waiters: { resolve: (result: CheckpointResult) => void; reject: (error: Error) => void }[] =
    [];
  let stopping: Promise<void> | null = null;
  const done = () => {
    inProgress = null;
    if (waiters.length === 0 && !stopping) hold(false);
    finish();
  };
  worker.on("message", (message: { result?: CheckpointResult; error?: string }) => {
    done();
    if (message.error !== undefined) onError(new Error(`WAL checkpoint failed: ${message.error}`));
    if (!message.result) return;
    const ready = waiters;
    waiters = [];
    timer.unref();
    if (!stopping) hold(false);
    for (const waiter of ready) waiter.resolve(message.result);
  });
  const exited = new Promise<void>((resolve) =>
    worker.once("exit", (code) => {
      // Writes waiting for a checkpoint that will never report go ahead.
      dead = true;
      done();
      clearInterval(timer);
      const lost = waiters;
      waiters = [];
      for (const waiter of lost) waiter.reject(new Error("The checkpoint worker has stopped."));
      // Without the worker, SQLite's own checkpoints keep the WAL bounded again.
      if (stopping) return resolve();
      if (database.open) database.pragma(`wal_autocheckpoint = ${ownAutocheckpoint}`);
      onError(
        new Error(
          `The checkpoint worker exited (code ${code}): the connection checkpoints inside its commits.`,
        ),
      );
      resolve();
    }),
  );
  worker.on("error", (error) => onError(error));
  const timer = setInterval(() => {
    if (inProgress || dead) return;
    inProgress = new Promise((resolve) => {
      finish = resolve;
    });
    hold(true);
    worker.postMessage("checkpoint");
  }, options.intervalMs ?? 250);
  timer.unref();
  running.set(database, () => inProgress);
  const fallback = connectionCheckpoints(database);
  return {
    runsIn: () => (dead ? "connection" : "worker"),
    nextCheckpoint() {
      if (dead) return fallback.nextCheckpoint();
      // Someone waits for it: the process lives until it comes.
      timer.ref();
      hold(true);
      return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
    },
    stop() {
      stopping ??= (async () => {
        // Shutdown goes on after this: the process must not exit with the worker running.
        hold(true);
        clearInterval(timer);
        await inProgress;
        worker.postMessage("stop");
        await exited;
        running.delete(database);
        if (database.open) database.pragma("wal_checkpoint(TRUNCATE)");
      })();
      return stopping;
    },
  };
}

/**
 * Checkpoints without a worker: the connection's own, inside its commits. `nextCheckpoint`
 * runs one PASSIVE checkpoint on the connection; `stop` leaves an empty WAL.
 */
function connectionCheckpoints(database: Database.Database): BackgroundCheckpoints {
  let stopped = false;
  return {
    runsIn: () => "connection",
    async nextCheckpoint() {
      const [result] = database.pragma("wal_checkpoint(PASSIVE)") as CheckpointResult[];
      return result as CheckpointResult;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (database.open) database.pragma("wal_checkpoint(TRUNCATE)");
    },
  };
}
