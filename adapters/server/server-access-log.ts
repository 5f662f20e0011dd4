import { BufferedAccessLog } from "../../src/access-log/buffered-access-log.js";
import {
  type AccessLogRetentionJob,
  retentionOfPools,
  startAccessLogRetention,
} from "../../src/access-log/retention.js";
import type { AccessLogStore } from "../../src/access-log/types.js";
import type { CatalogStore } from "../../src/catalog/types.js";
import type { Clock } from "../../src/clock/clock.js";

/** The server's pool access log and its retention job. */
export interface ServerAccessLog {
  /** What the Lock API and proxy append to, and what `SluiceServer.accessLog` reads. */
  readonly accessLog: BufferedAccessLog;
  /** Prunes to each pool's retention now and then hourly. */
  startRetention(): void;
  /** Stops the retention job and writes what is buffered; later appends are dropped. */
  close(): Promise<void>;
}

/** Options of {@link createServerAccessLog}. */
export interface ServerAccessLogOptions {
  store: AccessLogStore;
  catalog: Pick<CatalogStore, "findPoolBySubdomain" | "listAllPools">;
  clock: Clock;
  log: (line: string) => void;
}

/**
 * The access log `sluice serve` keeps in its database. A pool's log is read from the pool's
 * creation on: a subdomain may have named a deleted pool (maybe another team's) whose entries
 * were not deleted, e.g. the server stopped before it saw the deletion.
 *
 * @example
 * ```ts
 * const { accessLog, startRetention, close } = createServerAccessLog({ store, catalog: catalog.store, clock, log });
 * startRetention();
 * await accessLog.list("chat", { limit: 20 });
 * await close();
 * ```
 */
export function createServerAccessLog(options: ServerAccessLogOptions): ServerAccessLog {
  const { catalog, clock, log } = options;
  const accessLog = new BufferedAccessLog({
    store: options.store,
    clock,
    onError: (error) => log(`Writing the access log failed: ${(error as Error).message}`),
    poolCreatedAt: async (pool) => (await catalog.findPoolBySubdomain(pool))?.createdAt,
  });
  let retention: AccessLogRetentionJob | null = null;
  return {
    accessLog,
    startRetention() {
      retention ??= startAccessLogRetention({
        accessLog,
        clock,
        retention: async () => retentionOfPools(await catalog.listAllPools()),
        onError: (error) => log(`Pruning the access log failed: ${(error as Error).message}`),
      });
    },
    async close() {
      retention?.stop();
      await accessLog.close();
    },
  };
}
