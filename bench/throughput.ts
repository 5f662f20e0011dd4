import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Contender } from "./contenders.js";
import { throughputContenders } from "./contenders.js";
import { formatCount, formatRatio, formatTable, median } from "./report.js";

/** Options of {@link measureThroughput}. */
export interface ThroughputOptions {
  /** Tasks per contender per round, all submitted at once. */
  tasks: number;
  /** Measured rounds per contender; the median is reported. */
  rounds: number;
  /** Tasks of the unmeasured warm-up round that lets the JIT settle. */
  warmupTasks: number;
  /** Limiters to compare (the first is the one the ratios are about). */
  contenders?: Contender[];
}

/** One contender's result. */
export interface ThroughputResult {
  name: string;
  /** Median tasks per second over the rounds. */
  tasksPerSecond: number;
  /** Tasks per second of every round, in round order. */
  samples: number[];
}

/**
 * Runs every contender `rounds` times, interleaved (round r runs them forwards when r is
 * even, backwards when odd, so no one always runs right after the same neighbour), with a
 * full garbage collection before each run so nobody pays for another's garbage. Reports the
 * median rate of each.
 *
 * @example
 * ```ts
 * const results = await measureThroughput({ tasks: 200_000, rounds: 5, warmupTasks: 50_000 });
 * console.log(formatThroughput(results));
 * ```
 */
export async function measureThroughput(options: ThroughputOptions): Promise<ThroughputResult[]> {
  const contenders = options.contenders ?? throughputContenders();
  const collectGarbage = exposeGc();
  for (const contender of contenders) await contender.run(options.warmupTasks);
  const samples = contenders.map(() => [] as number[]);
  for (let round = 0; round < options.rounds; round++) {
    const order = contenders.map((_, index) => index);
    if (round % 2 === 1) order.reverse();
    for (const index of order) {
      collectGarbage();
      const startedAt = performance.now();
      await contenders[index]!.run(options.tasks);
      const elapsedMs = performance.now() - startedAt;
      samples[index]!.push((options.tasks * 1000) / elapsedMs);
    }
  }
  return contenders.map((contender, index) => ({
    name: contender.name,
    tasksPerSecond: median(samples[index]!),
    samples: samples[index]!,
  }));
}

/**
 * The results as a table: median tasks/s, the spread of the rounds, and the first contender's
 * ratio to each of the others (above 1.00× means the first is faster).
 *
 * @example
 * ```ts
 * console.log(formatThroughput(await measureThroughput({ tasks: 10_000, rounds: 3, warmupTasks: 1_000 })));
 * ```
 */
export function formatThroughput(results: readonly ThroughputResult[]): string {
  const subject = results[0];
  if (!subject) return "(no contenders)";
  const rows = results.map((result) => [
    result.name,
    formatCount(result.tasksPerSecond),
    `${formatCount(Math.min(...result.samples))} – ${formatCount(Math.max(...result.samples))}`,
    result === subject ? "" : formatRatio(subject.tasksPerSecond / result.tasksPerSecond),
  ]);
  return formatTable(
    ["limiter", "tasks/s (median)", "range over rounds", `${subject.name} ÷ this`],
    rows,
    ["left", "right", "right", "right"],
  );
}

/** A full GC, exposed at run time so `npm run bench` needs no node flags; a no-op if refused. */
function exposeGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  try {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as unknown;
    if (typeof gc === "function") return gc as () => void;
  } catch {
    // Some runtimes refuse flag changes; the rounds' medians still tame the noise.
  }
  return () => {};
}
