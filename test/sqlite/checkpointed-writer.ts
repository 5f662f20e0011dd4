/**
 * A process that writes the access log as a server does (checkpoints in a worker), flushes
 * some entries, buffers more, says READY and waits to be killed: the crash half of
 * background-checkpoints.test.ts. Usage: checkpointed-writer.ts <db file> <flushed> <buffered>
 */
import { createSqliteAccessLog } from "../../adapters/sqlite/access-log-store.js";
import { startBackgroundCheckpoints } from "../../adapters/sqlite/background-checkpoints.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { accessLogEntry } from "../lock-api/access-log-entry.js";

const [filename, flushed, buffered] = process.argv.slice(2);
const db = openSluiceDatabase(filename as string);
const checkpoints = startBackgroundCheckpoints(db, { intervalMs: 5 });
const log = createSqliteAccessLog(db, {
  flushIntervalMs: 60_000,
  batchSize: 1_000_000,
  onError: (error) => process.stderr.write(`access log: ${(error as Error).message}\n`),
});
for (let i = 0; i < Number(flushed); i++) log.append(accessLogEntry({ at: i }));
await log.flush();
// Two checkpoints after the flush: some of the flushed rows are in the database file by now.
await checkpoints.nextCheckpoint();
await checkpoints.nextCheckpoint();
for (let i = 0; i < Number(buffered); i++) log.append(accessLogEntry({ at: 1_000_000 + i }));
process.stdout.write("READY\n");
setInterval(() => {}, 1_000);
