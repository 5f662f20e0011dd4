/**
 * Several processes, one exact limit: `npm run example:redis` (needs Redis ≥ 7 on REDIS_URL,
 * default redis://127.0.0.1:6379).
 *
 * The parent starts a local fake upstream that counts how many requests it has in progress,
 * then forks worker processes. Each worker builds its own governor on the same Redis
 * (`createRedisGovernor`), defines the same pool, and fires governed fetches at the upstream
 * at once. The upstream never sees more than the pool's `maxConcurrent` at once, however many
 * processes call it, and every call gets through (the rest wait in one FIFO queue in Redis).
 *
 * It imports `sluice` as an app of yours would: inside this repository the name resolves to the
 * package's own build (`dist/`: `npm run example:redis` builds it first; run `npm run build` before
 * `npx tsx examples/shared-limit-redis.ts`, which does not).
 */

import { fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRedisGovernor, deleteKeysUnder } from "sluice/redis";
import { startFakeUpstream } from "./fake-upstream.js";

const POOL = "shared-upstream";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** Settings of one run of the example. */
export interface SharedLimitOptions {
  /** Worker processes, each with its own governor. */
  processes?: number;
  /** Governed fetches each worker fires at once. */
  callsPerProcess?: number;
  /** The pool's limit, shared by every process. */
  maxConcurrent?: number;
  /** Node flags of the workers; default: this process's own (under tsx: its loader). */
  workerExecArgv?: string[];
}

/** What the upstream saw, and what the workers got. */
export interface SharedLimitSummary {
  processes: number;
  calls: number;
  ok: number;
  maxConcurrent: number;
  /** Most requests the upstream had in progress at once. */
  peakInFlight: number;
  elapsedMs: number;
}

/** What a worker is told (argv) and answers (IPC). */
interface WorkerTask {
  upstreamUrl: string;
  prefix: string;
  calls: number;
  maxConcurrent: number;
}

/**
 * Runs the example: a fake upstream (it would serve 100 at once), `processes` workers on one
 * Redis sharing one pool, and a summary of what the upstream saw. Cleans up after itself
 * (the run's Redis keys live under a fresh prefix, deleted at the end).
 *
 * @example
 * ```ts
 * const summary = await main({ processes: 3, callsPerProcess: 20, maxConcurrent: 4 });
 * console.log(formatSharedLimit(summary));
 * ```
 */
export async function main(options: SharedLimitOptions = {}): Promise<SharedLimitSummary> {
  const processes = options.processes ?? 3;
  const callsPerProcess = options.callsPerProcess ?? 20;
  const maxConcurrent = options.maxConcurrent ?? 4;
  const upstream = await startFakeUpstream({
    concurrency: 100,
    serviceMs: { min: 5, max: 15 },
  });
  const task: WorkerTask = {
    upstreamUrl: upstream.url,
    prefix: `sluice-example:${randomUUID().slice(0, 8)}:`,
    calls: callsPerProcess,
    maxConcurrent,
  };
  const startedAt = performance.now();
  try {
    const execArgv = options.workerExecArgv ?? process.execArgv;
    const oks = await Promise.all(
      Array.from({ length: processes }, () => runWorker(task, execArgv)),
    );
    return {
      processes,
      calls: processes * callsPerProcess,
      ok: oks.reduce((sum, ok) => sum + ok, 0),
      maxConcurrent,
      peakInFlight: upstream.stats.peakInFlight,
      elapsedMs: performance.now() - startedAt,
    };
  } finally {
    await upstream.close();
    await deleteKeysUnder(task.prefix, REDIS_URL);
  }
}

/** Forks this file as a worker process; resolves with how many of its calls got a 200. */
function runWorker(task: WorkerTask, execArgv: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ["worker", JSON.stringify(task)], {
      execArgv,
    });
    let ok: number | null = null;
    child.on("message", (message) => {
      ok = (message as { ok: number }).ok;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0 && ok !== null) resolve(ok);
      else reject(new Error(`A worker exited with code ${code}.`));
    });
  });
}

/** One worker process: its own governor on the shared Redis, `calls` governed fetches at once. */
async function worker(task: WorkerTask): Promise<void> {
  const governor = await createRedisGovernor({ url: REDIS_URL, prefix: task.prefix });
  try {
    await governor.definePool(POOL, {
      maxConcurrent: task.maxConcurrent,
      queue: { size: 1_000, timeoutMs: 30_000 },
    });
    const statuses = await Promise.all(
      Array.from({ length: task.calls }, async (_, index) => {
        const response = await governor.fetch(POOL, `${task.upstreamUrl}/v1/items/${index}`, {
          waitMs: 30_000,
        });
        await response.text();
        return response.status;
      }),
    );
    process.send?.({ ok: statuses.filter((status) => status === 200).length });
  } finally {
    await governor.close();
  }
}

/**
 * The summary as a few readable lines.
 *
 * @example
 * ```ts
 * console.log(formatSharedLimit(await main()));
 * ```
 */
export function formatSharedLimit(summary: SharedLimitSummary): string {
  return [
    `${summary.processes} processes, each with its own governor on ${REDIS_URL}, one pool of maxConcurrent ${summary.maxConcurrent}`,
    `  governed fetches:           ${summary.calls} (${summary.ok} ok)`,
    `  peak in flight at upstream: ${summary.peakInFlight} (${summary.peakInFlight <= summary.maxConcurrent ? "within" : "ABOVE, which is a bug:"} the limit of ${summary.maxConcurrent}, across all processes)`,
    `  elapsed:                    ${(summary.elapsedMs / 1000).toFixed(2)} s`,
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const work =
    process.argv[2] === "worker"
      ? worker(JSON.parse(process.argv[3] as string) as WorkerTask)
      : main().then((summary) => console.log(formatSharedLimit(summary)));
  work.catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
