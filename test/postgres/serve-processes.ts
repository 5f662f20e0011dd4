import { afterAll, afterEach } from "vitest";
import { type RunningSluice, tempDir } from "../cli/cli-process.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";

/**
 * The `sluice serve` processes a test file starts on fresh PostgreSQL databases: `running`
 * collects them (stopped after each test), `database()` creates one (dropped after the file),
 * `dirs` is the file's temporary directory.
 *
 * @example
 * ```ts
 * const { database, running, dirs } = serveProcesses("pg_serve");
 * running.push(startSluice(["serve", "--database-url", (await database()).url], env));
 * ```
 */
export function serveProcesses(suite: string): {
  database(): Promise<TestDatabase>;
  running: RunningSluice[];
  dirs: { dir: string; cleanup(): void };
} {
  const databases: TestDatabase[] = [];
  const running: RunningSluice[] = [];
  const dirs = tempDir(`sluice-${suite}-`);
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.stop()));
  });
  afterAll(async () => {
    for (const database of databases) await database.drop();
    dirs.cleanup();
  });
  return {
    async database() {
      const created = await createTestDatabase(suite);
      databases.push(created);
      return created;
    },
    running,
    dirs,
  };
}
