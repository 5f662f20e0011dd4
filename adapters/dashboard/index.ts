/**
 * The web dashboard: sign-in, overview, budgets, pools, keys, API tokens and members, as a
 * Hono app to mount at the root of the base URL (`sluice serve` does).
 *
 * @example
 * ```ts
 * import { createDashboardApp } from "sluice/server";
 * ```
 */
export { createDashboardApp } from "./create-dashboard-app.js";
export type {
  DashboardContext,
  DashboardDeps,
  DashboardEnv,
  DashboardVariables,
} from "./dashboard-env.js";
export { dashboardSessions } from "./oauth-sessions.js";
export { sessionCookieFor } from "./session-cookie.js";
export { requireSignIn, safeNext, signInUrl } from "./session-middleware.js";
