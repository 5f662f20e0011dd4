import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";

/**
 * `mkdir -p` one level at a time. Node's own `mkdirSync(dir, { recursive: true })` spins
 * forever on some special file systems (a path under /proc), where a plain `mkdir` fails
 * at once with a readable error.
 *
 * @example
 * ```ts
 * makeDirectory("/var/lib/sluice/data", 0o700);
 * ```
 */
export function makeDirectory(directory: string, mode?: number): void {
  if (existsSync(directory)) return;
  const parent = dirname(directory);
  if (parent !== directory) makeDirectory(parent, mode);
  try {
    mkdirSync(directory, mode === undefined ? undefined : { mode });
  } catch (error) {
    // Made meanwhile by another process: fine.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}
