import { Hono } from "hono";
import { ConnectedAppsPage } from "./connected-apps-page.js";
import type { GrantService } from "./grant-service.js";
import { ErrorPage, htmlPage } from "./page-layout.js";
import type { OAuthSessions } from "./session.js";

/** Where the Connected apps page is served (the dashboard links here). */
export const CONNECTED_APPS_PATH = "/oauth/connected-apps";

/**
 * "Connected apps": `GET /oauth/connected-apps` lists the signed-in user's grants in their
 * team; `POST /oauth/connected-apps/{id}/revoke` revokes one at once (its tokens stop working
 * on their next use). Behind the app's CSRF check; signed-out visitors are sent to sign in.
 *
 * @example
 * ```ts
 * app.route("/oauth", connectedAppsRoutes({ grants, sessions }));
 * ```
 */
export function connectedAppsRoutes(deps: { grants: GrantService; sessions: OAuthSessions }) {
  const routes = new Hono();

  routes.get("/connected-apps", async (c) => {
    const user = await deps.sessions.currentUser(c);
    if (!user) return c.redirect(deps.sessions.signInUrl(CONNECTED_APPS_PATH), 302);
    const notice = c.req.query("revoked") === "1" ? "Access revoked." : undefined;
    const grants = await deps.grants.listGrants(user);
    return htmlPage(c, <ConnectedAppsPage grants={grants} notice={notice} />);
  });

  routes.post("/connected-apps/:grant/revoke", async (c) => {
    const user = await deps.sessions.currentUser(c);
    if (!user) return c.redirect(deps.sessions.signInUrl(CONNECTED_APPS_PATH), 303);
    const grantId = Number(c.req.param("grant"));
    const revoked = Number.isSafeInteger(grantId) && (await deps.grants.revokeGrant(user, grantId));
    if (!revoked) {
      const page = <ErrorPage title="Not found" message="No such connected app." />;
      return htmlPage(c, page, 404);
    }
    return c.redirect(`${CONNECTED_APPS_PATH}?revoked=1`, 303);
  });

  return routes;
}
