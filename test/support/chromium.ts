import { existsSync } from "node:fs";

/** The browser the browser tests drive: `CHROMIUM_PATH`, else Debian's chromium package (`.ci/run` installs it). */
export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/lib/chromium/chromium";

/**
 * Whether {@link CHROMIUM} is there to run `suite`. Under CI a missing browser fails the run;
 * locally (a laptop without Debian's chromium) the suite is skipped with a loud warning, as the
 * Redis and PostgreSQL suites are, so `npm test` on a fresh clone is not red for it.
 *
 * @example
 * ```ts
 * describe.skipIf(!chromiumAvailable("the dashboard browser test"))("dashboard", () => { … });
 * ```
 */
export function chromiumAvailable(suite: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `No browser at ${CHROMIUM}: ${suite} cannot run.`;
  if (process.env.CI === "true") throw new Error(message);
  console.warn(`\n!!! ${message} Skipping (install chromium or set CHROMIUM_PATH). !!!\n`);
  return false;
}
