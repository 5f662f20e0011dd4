import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { PayloadTooLargeError, SluiceError } from "../../src/errors.js";
import { statusForError } from "../hono/error-status.js";
import { ASSETS_PREFIX, assetRoutes } from "./assets.js";
import type { DashboardDeps, DashboardEnv } from "./dashboard-env.js";
import { MessagePage } from "./pages/message-page.js";
import { accountRoutes } from "./routes/account-routes.js";
import { budgetRoutes } from "./routes/budget-routes.js";
import { overviewRoutes } from "./routes/overview-routes.js";
import { poolDetailRoutes } from "./routes/pool-detail-routes.js";
import { poolRoutes } from "./routes/pool-routes.js";
import { settingsRoutes } from "./routes/settings-routes.js";
import { setupRoutes } from "./routes/setup-routes.js";
import { signInRoutes } from "./routes/sign-in-routes.js";
import { dashboardCsrf, dashboardSecureHeaders } from "./security.js";
import { sessionCookieFor } from "./session-cookie.js";
import { onlyManagers, onlyManagersChange, requireSignIn } from "./session-middleware.js";

/** Largest form body read (1 MiB): a pool form with a pasted key set is tens of KiB. */
export const MAX_FORM_BYTES = 1_048_576;

/**
 * The web dashboard (issue 21): server-rendered pages (hono/jsx) with htmx for live
 * figures, served at the root of the base URL beside the Control API. Every change goes
 * through the catalog service the CLI and Control API use and reaches the governor at once
 * (`deps.syncCatalog`). Forms work without JavaScript.
 *
 * Object pages are singular (`/pool/<subdomain>`, `/budget/<id>`): `/pools/*` on the base host
 * belongs to the Lock API whenever the base and lock URLs share a host (the default).
 *
 * Order matters: sign-in and first-run setup pages are public; everything registered after `requireSignIn`
 * needs a session; everything after `onlyManagersChange` refuses members' writes.
 *
 * @example
 * ```ts
 * const dashboard = createDashboardApp({ catalog, auth, governor, metrics, accessLog, clock, baseUrl, lockUrl, poolDomain });
 * const response = await dashboard.request("/sign-in");
 * ```
 */
export function createDashboardApp(deps: DashboardDeps): Hono<DashboardEnv> {
  const cookie = sessionCookieFor(deps.baseUrl);
  const logError = deps.logError ?? ((error: unknown) => console.error(error));
  const app = new Hono<DashboardEnv>();
  app.use(dashboardSecureHeaders());
  app.route(ASSETS_PREFIX, assetRoutes());
  app.use(dashboardCsrf(deps.baseUrl));
  // Every form is read whole into memory: without a bound, anyone (signed in or not) could
  // post a body of any size. The largest form, a pool's with a pasted key set, is far smaller.
  app.use(
    bodyLimit({
      maxSize: MAX_FORM_BYTES,
      onError: () => {
        throw new PayloadTooLargeError(MAX_FORM_BYTES);
      },
    }),
  );
  app.route("/", signInRoutes(deps, cookie));
  app.route("/", setupRoutes(deps, cookie));

  app.use(requireSignIn(deps.auth, cookie));
  app.route("/", accountRoutes(deps, cookie));
  app.route("/", overviewRoutes(deps));

  app.use(onlyManagersChange());
  app.use("/budget/new", onlyManagers());
  app.use("/pool/new", onlyManagers());
  // The edit forms too: a member has no link to them, and a form whose Save and Delete
  // answer 403 only loses what was typed.
  app.use("/budget/:id/edit", onlyManagers());
  app.use("/pool/:pool/edit", onlyManagers());
  app.route("/", budgetRoutes(deps));
  app.route("/", poolRoutes(deps));
  app.route("/", poolDetailRoutes(deps));
  app.route("/", settingsRoutes(deps));

  app.notFound((c) =>
    c.html(
      <MessagePage
        title="Not found"
        signedIn={c.get("signedIn")}
        message="Nothing here: it may have been deleted, or belong to another team."
      />,
      404,
    ),
  );
  app.onError((error, c) => {
    if (error instanceof HTTPException) {
      if (error.status !== 403) return error.getResponse();
      return c.html(
        <MessagePage
          title="Refused"
          message="This form was not sent from the dashboard itself (cross-site request refused)."
        />,
        403,
      );
    }
    const status = statusForError(error);
    if (status >= 500 || !(error instanceof SluiceError)) {
      logError(error);
      return c.html(
        <MessagePage
          title="Something went wrong"
          signedIn={c.get("signedIn")}
          message="The server could not do that; it has been logged. Try again in a moment."
        />,
        500,
      );
    }
    const title = status === 403 ? "Not allowed" : status === 404 ? "Not found" : "Refused";
    return c.html(
      <MessagePage title={title} signedIn={c.get("signedIn")} message={error.message} />,
      status,
    );
  });
  return app;
}
