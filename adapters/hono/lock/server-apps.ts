import { join } from "node:path";
import type { BufferedAccessLog } from "../../../src/access-log/buffered-access-log.js";
import { retentionOfPools, startAccessLogRetention } from "../../../src/access-log/retention.js";
import type { AccessLog } from "../../../src/access-log/types.js";
import type { ServerAppDeps } from "../../server/create-server.js";
import { DATABASE_FILE } from "../../server/data-dir.js";
import type { FetchApp } from "../../server/host-router.js";
import { createSqliteAccessLog } from "../../sqlite/access-log-store.js";
import { openSluiceDatabase } from "../../sqlite/database.js";
import { createProxyApp } from "../proxy/create-proxy-app.js";
import { createLockApp } from "./create-lock-app.js";
import { CatalogPoolDirectory, type PoolDirectory } from "./pool-directory.js";

/** What the server gives the factories; `accessLog` once the server owns one. */
export type TrafficServerDeps = ServerAppDeps & { accessLog?: AccessLog };

interface SharedParts {
  accessLog: AccessLog;
  directory: PoolDirectory;
}

// The server calls both factories with one deps object: both apps then share one access
// log and one catalog cache.
const shared = new WeakMap<object, SharedParts>();

function sharedParts(deps: TrafficServerDeps): SharedParts {
  let parts = shared.get(deps);
  if (!parts) {
    parts = {
      accessLog: deps.accessLog ?? openAccessLog(deps),
      directory: new CatalogPoolDirectory(deps.catalog),
    };
    shared.set(deps, parts);
  }
  return parts;
}

/**
 * Until the server passes its own `accessLog`, the apps keep one on a second connection to
 * the data directory's database (WAL allows it), pruned hourly to each pool's retention.
 */
function openAccessLog(deps: TrafficServerDeps): BufferedAccessLog {
  const database = openSluiceDatabase(join(deps.config.dataDir, DATABASE_FILE));
  const accessLog = createSqliteAccessLog(database, { clock: deps.clock });
  startAccessLogRetention({
    accessLog,
    clock: deps.clock,
    retention: () => retentionOfPools(deps.catalog.store.listAllPools()),
  });
  return accessLog;
}

/**
 * The Lock API as a server app factory (for `createSluiceServer`'s `lockApp`).
 *
 * @example
 * ```ts
 * const server = await createSluiceServer(config, { lockApp: lockAppForServer, proxyApp: proxyAppForServer });
 * ```
 */
export function lockAppForServer(deps: TrafficServerDeps): FetchApp {
  const { accessLog, directory } = sharedParts(deps);
  return createLockApp({
    governor: deps.governor,
    catalog: deps.catalog,
    clock: deps.clock,
    accessLog,
    directory,
  });
}

/**
 * The pool proxy as a server app factory (for `createSluiceServer`'s `proxyApp`).
 *
 * @example
 * ```ts
 * const server = await createSluiceServer(config, { lockApp: lockAppForServer, proxyApp: proxyAppForServer });
 * ```
 */
export function proxyAppForServer(deps: TrafficServerDeps): FetchApp {
  const { accessLog, directory } = sharedParts(deps);
  return createProxyApp({
    governor: deps.governor,
    catalog: deps.catalog,
    clock: deps.clock,
    poolDomain: deps.config.poolDomain,
    accessLog,
    directory,
  });
}
