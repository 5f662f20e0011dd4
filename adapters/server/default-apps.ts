import { dashboardSessions } from "../dashboard/oauth-sessions.js";
import { dashboardAppForServer } from "../dashboard/server-app.js";
import { assistantAppForServer } from "./assistant-app.js";
import type { SluiceServerOptions } from "./create-server.js";
import { lockAppForServer, proxyAppForServer } from "./traffic-apps.js";

/**
 * The Lock API, pool proxy and dashboard apps `sluice serve` mounts (the lock and proxy
 * apps share one access log and one catalog cache; see `traffic-apps.ts`).
 *
 * @example
 * ```ts
 * const server = await createSluiceServer(config, { ...DEFAULT_SERVER_APPS, log });
 * ```
 */
export const DEFAULT_SERVER_APPS: Pick<
  SluiceServerOptions,
  "lockApp" | "proxyApp" | "dashboardApp" | "assistantApp"
> = {
  // Lock API and pool proxy (issue 4).
  lockApp: lockAppForServer,
  proxyApp: proxyAppForServer,
  // Web dashboard (issue 21).
  dashboardApp: dashboardAppForServer,
  // MCP server and its OAuth sign-in (issue 17); people sign in through the dashboard.
  assistantApp: (deps) =>
    assistantAppForServer({ sessions: dashboardSessions(deps.auth, deps.config.baseUrl) })(deps),
};
