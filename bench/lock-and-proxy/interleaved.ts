import { median } from "../report.js";
import { type LoadResult, runLoad } from "./load.js";
import { processCpuMicros } from "./process-cpu.js";

// Many short rounds, each contender's round next to the others': neighbours' bursts of load
// on a shared machine then hit a round of every contender alike, and the ratio of two
// adjacent rounds cancels them (the median of those per-round ratios is what is reported).
export const ROUNDS = 5;

/**
 * A measured contender: its median round, every round's rate (in round order), and the CPU
 * its server process spent per operation.
 */
export type Measured = LoadResult & {
  rates: number[];
  cpuMicrosPerOp: number | null;
  /** CPU the load generator (this process) spent per operation: is it the bottleneck? */
  clientCpuMicrosPerOp: number;
};

/** The median over rounds of `run`'s rate divided by `reference`'s rate in the same round. */
export function pairedRatio(run: Measured, reference: Measured): number {
  return median(run.rates.map((rate, round) => rate / (reference.rates[round] as number)));
}

/** One contender of an interleaved measurement. */
export interface Runner {
  /** The process that serves the client: its CPU time is divided by the operations. */
  pid: number | undefined;
  operation: () => Promise<boolean>;
}

/**
 * Measures contenders side by side: a warm-up each, then ROUNDS rounds in which every
 * contender runs once in turn (interleaved, so a neighbour's burst of load on a shared
 * machine hits all of them alike). Keeps each contender's median round, plus the CPU its
 * server process spent per operation over all rounds (steadier than rates under contention).
 */
export async function measureInterleaved(
  operations: number,
  concurrency: number,
  runners: readonly Runner[],
): Promise<Measured[]> {
  for (const runner of runners)
    await runLoad(Math.max(200, Math.round(operations / 4)), concurrency, runner.operation);
  const rounds = runners.map(() => [] as LoadResult[]);
  const cpuSpent = runners.map(() => 0 as number | null);
  const clientSpent = runners.map(() => 0);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, runner] of runners.entries()) {
      const before = processCpuMicros(runner.pid);
      const clientBefore = process.cpuUsage();
      rounds[index]?.push(await runLoad(operations, concurrency, runner.operation));
      const client = process.cpuUsage(clientBefore);
      clientSpent[index] = (clientSpent[index] ?? 0) + client.user + client.system;
      const after = processCpuMicros(runner.pid);
      const spent = cpuSpent[index];
      cpuSpent[index] =
        before === null || after === null || spent === null || spent === undefined
          ? null
          : spent + after - before;
    }
  }
  return rounds.map((results, index) => {
    const rate = median(results.map((result) => result.perSecond));
    const kept = results.find((result) => result.perSecond === rate) ?? (results[0] as LoadResult);
    const spent = cpuSpent[index];
    const cpuMicrosPerOp =
      spent === null || spent === undefined ? null : spent / (operations * ROUNDS);
    return {
      ...kept,
      rates: results.map((result) => result.perSecond),
      cpuMicrosPerOp,
      clientCpuMicrosPerOp: (clientSpent[index] ?? 0) / (operations * ROUNDS),
    };
  });
}
