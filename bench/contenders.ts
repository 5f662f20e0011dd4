import { Sema } from "async-sema";
import pLimit from "p-limit";
import PQueue from "p-queue";
import { createGovernor, type Governor } from "../src/index.js";

/** Concurrency every contender runs at. */
export const BENCH_CONCURRENCY = 8;

/**
 * Sluice's RPM gate in the throughput bench: large enough never to bind (a round is far below
 * it). The gate stays exact, so the memory store's grant log keeps every grant of the last
 * minute (8 bytes each, grown on demand), up to `rpm` of them.
 */
export const BENCH_RPM = 1_000_000;

/** One limiter under test: runs `tasks` empty async tasks, all submitted at once, and awaits them. */
export interface Contender {
  readonly name: string;
  run(tasks: number): Promise<void>;
}

const emptyTask = async (): Promise<void> => {};

let governor: Governor | undefined;
let pools = 0;

/**
 * The one governor of the bench process, as an application keeps one for its lifetime. Each
 * round gets a fresh pool on it (defined before, removed after), as the other contenders get
 * a fresh limiter: no round inherits another's queue, slots or metrics.
 */
function benchGovernor(): Governor {
  governor ??= createGovernor();
  return governor;
}

function freshPoolName(): string {
  pools++;
  return `bench-${pools}`;
}

/**
 * The contenders of the throughput bench, Sluice first. Each `run` builds a fresh limiter (for
 * Sluice, a fresh pool on the process's one governor, see `benchGovernor`), so
 * no round inherits another's queue or garbage.
 *
 * @example
 * ```ts
 * for (const contender of throughputContenders()) await contender.run(10_000);
 * ```
 */
export function throughputContenders(): Contender[] {
  return [
    { name: "sluice run()", run: runSluice },
    { name: "p-limit", run: runPLimit },
    { name: "p-queue", run: runPQueue },
    { name: "async-sema", run: runAsyncSema },
  ];
}

/** Callers of the steady workload: each awaits its task before taking the next. */
export const STEADY_CALLERS = 64;

/**
 * The same limiters in a steady workload: {@link STEADY_CALLERS} callers each await one task
 * at a time until `tasks` have run, so the queue stays shallow (closed loop), as in a server.
 *
 * @example
 * ```ts
 * for (const contender of steadyContenders()) await contender.run(10_000);
 * ```
 */
export function steadyContenders(): Contender[] {
  return [
    {
      name: "sluice run()",
      run: async (tasks) => {
        const governor = benchGovernor();
        const pool = freshPoolName();
        await governor.definePool(pool, {
          maxConcurrent: BENCH_CONCURRENCY,
          rpm: BENCH_RPM,
          queue: { size: STEADY_CALLERS, timeoutMs: 60_000 },
        });
        const options = { waitMs: 60_000 };
        await closedLoop(tasks, () => governor.run(pool, emptyTask, options));
        await governor.removePool(pool);
      },
    },
    {
      name: "p-limit",
      run: (tasks) => {
        const limit = pLimit(BENCH_CONCURRENCY);
        return closedLoop(tasks, () => limit(emptyTask));
      },
    },
    {
      name: "p-queue",
      run: (tasks) => {
        const queue = new PQueue({ concurrency: BENCH_CONCURRENCY });
        return closedLoop(tasks, () => queue.add(emptyTask));
      },
    },
    {
      name: "async-sema",
      run: (tasks) => {
        const sema = new Sema(BENCH_CONCURRENCY);
        return closedLoop(tasks, async () => {
          await sema.acquire();
          try {
            await emptyTask();
          } finally {
            sema.release();
          }
        });
      },
    },
  ];
}

async function closedLoop(tasks: number, runOne: () => Promise<unknown>): Promise<void> {
  let left = tasks;
  const caller = async (): Promise<void> => {
    while (left > 0) {
      left--;
      await runOne();
    }
  };
  await Promise.all(Array.from({ length: STEADY_CALLERS }, caller));
}

/** `governor.run()` with leases (default term), the RPM gate and default metrics all on. */
async function runSluice(tasks: number): Promise<void> {
  const governor = benchGovernor();
  const pool = freshPoolName();
  await governor.definePool(pool, {
    maxConcurrent: BENCH_CONCURRENCY,
    rpm: BENCH_RPM,
    queue: { size: tasks, timeoutMs: 60_000 },
  });
  const options = { waitMs: 60_000 };
  const pending = new Array<Promise<void>>(tasks);
  for (let index = 0; index < tasks; index++) {
    pending[index] = governor.run(pool, emptyTask, options);
  }
  await Promise.all(pending);
  await governor.removePool(pool);
}

async function runPLimit(tasks: number): Promise<void> {
  const limit = pLimit(BENCH_CONCURRENCY);
  const pending = new Array<Promise<void>>(tasks);
  for (let index = 0; index < tasks; index++) pending[index] = limit(emptyTask);
  await Promise.all(pending);
}

async function runPQueue(tasks: number): Promise<void> {
  const queue = new PQueue({ concurrency: BENCH_CONCURRENCY });
  const pending = new Array<Promise<void>>(tasks);
  for (let index = 0; index < tasks; index++) pending[index] = queue.add(emptyTask);
  await Promise.all(pending);
}

async function runAsyncSema(tasks: number): Promise<void> {
  const sema = new Sema(BENCH_CONCURRENCY);
  const guarded = async (): Promise<void> => {
    await sema.acquire();
    try {
      await emptyTask();
    } finally {
      sema.release();
    }
  };
  const pending = new Array<Promise<void>>(tasks);
  for (let index = 0; index < tasks; index++) pending[index] = guarded();
  await Promise.all(pending);
}
