import { readFileSync } from "node:fs";

/** Linux's USER_HZ: /proc reports CPU time in ticks of 1/100 s on every mainstream build. */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system) a process has used so far, in microseconds, read from
 * `/proc/<pid>/stat`; null where that is not available (not Linux, process gone).
 * On a shared machine, CPU per operation is steadier than throughput: it does not depend on
 * how much of the cores other processes took meanwhile.
 *
 * @example
 * ```ts
 * const before = processCpuMicros(child.pid);
 * ```
 */
export function processCpuMicros(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name (which may contain spaces).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const user = Number(fields[11]);
    const system = Number(fields[12]);
    if (!Number.isFinite(user) || !Number.isFinite(system)) return null;
    return ((user + system) * 1_000_000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}
