import { clientAddressReader } from "../hono/caller/client-address-reader.js";
import type { ServerAppDeps } from "../server/create-server.js";
import type { FetchApp } from "../server/host-router.js";
import { createDashboardApp } from "./create-dashboard-app.js";

/**
 * The dashboard as a server app factory (for `createSluiceServer`'s `dashboardApp`): the
 * server's catalog, governor, metrics, access log and sign-in, with every write applied to
 * the governor at once through the server's catalog sync.
 *
 * @example
 * ```ts
 * const server = await createSluiceServer(config, { dashboardApp: dashboardAppForServer });
 * ```
 */
export function dashboardAppForServer(deps: ServerAppDeps): FetchApp {
  return createDashboardApp({
    catalog: deps.catalog,
    auth: deps.auth,
    governor: deps.governor,
    metrics: deps.metrics,
    accessLog: deps.accessLog,
    clock: deps.clock,
    baseUrl: deps.config.baseUrl,
    lockUrl: deps.config.lockUrl,
    poolDomain: deps.config.poolDomain,
    syncCatalog: deps.syncCatalog,
    publicUrls: deps.publicUrls,
    remoteAddress: clientAddressReader(deps.config.trustedProxies),
  });
}
