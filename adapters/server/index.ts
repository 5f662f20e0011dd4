/**
 * `sluice/server`: the embedded server (Control API, Lock API, pool proxy) as a library, for
 * running Sluice inside another process or mounting more apps on it.
 *
 * @example
 * ```ts
 * import { createSluiceServer, loadServerConfig } from "sluice/server";
 * const server = await createSluiceServer(loadServerConfig({ env: process.env }), { log: console.log });
 * await server.listen();
 * ```
 */

export type {
  AuthPolicy,
  AuthStore,
  ConnectedApps,
  SessionRecord,
  SignedIn,
  SignInLinkRecord,
  StartedSession,
} from "../../src/auth/index.js";
export {
  AuthService,
  changeMemberRole,
  DEFAULT_AUTH_POLICY,
  MemoryAuthStore,
  removeMember,
  SignInThrottledError,
} from "../../src/auth/index.js";
export type {
  DashboardContext,
  DashboardDeps,
  DashboardEnv,
  DashboardVariables,
} from "../dashboard/index.js";
export {
  createDashboardApp,
  dashboardSessions,
  requireSignIn,
  safeNext,
  sessionCookieFor,
  signInUrl,
} from "../dashboard/index.js";
export { dashboardAppForServer } from "../dashboard/server-app.js";
export { hostWithoutPort } from "../hono/host-name.js";
export type { OAuthSessions, SessionUser } from "../oauth/session.js";
export type { AssistantAppOptions } from "./assistant-app.js";
export { assistantAppForServer, NO_SESSIONS } from "./assistant-app.js";
export { withAssistantApp } from "./assistant-routing.js";
export type { CatalogSync, CatalogSyncOptions, SyncReport } from "./catalog-sync.js";
export { createCatalogSync, describeSync } from "./catalog-sync.js";
export type {
  ServerConfig,
  ServerConfigField,
  ServerConfigInput,
  ServerConfigSources,
} from "./config.js";
export {
  loadServerConfig,
  SERVER_CONFIG_DEFAULTS,
  SERVER_CONFIG_SOURCES,
  ServerConfigSchema,
} from "./config.js";
export type {
  ListenResult,
  ServerAppDeps,
  ServerAppFactory,
  SluiceServer,
  SluiceServerOptions,
} from "./create-server.js";
export { createSluiceServer } from "./create-server.js";
export type { OpenDataDir } from "./data-dir.js";
export { DATABASE_FILE, openDataDir, resolveDataDir } from "./data-dir.js";
export type { FetchApp, HostRouterOptions, RouteTarget } from "./host-router.js";
export { createHostRouter, createRouteResolver } from "./host-router.js";
export type { HttpListener } from "./http-listener.js";
export { listenHttp } from "./http-listener.js";
export type { MetricsPersistence, MetricsPersistenceOptions } from "./metrics-persistence.js";
export { createMetricsPersistence } from "./metrics-persistence.js";
export type { ServerAccessLog, ServerAccessLogOptions } from "./server-access-log.js";
export { createServerAccessLog } from "./server-access-log.js";
export type { FirstSignInLink } from "./sign-in-links.js";
export { firstSignInLinks } from "./sign-in-links.js";
export type { TrafficServerDeps } from "./traffic-apps.js";
export { lockAppForServer, proxyAppForServer } from "./traffic-apps.js";
