import { type Context, Hono } from "hono";
import { SignInThrottledError } from "../../../src/auth/auth-errors.js";
import type { StartedSession } from "../../../src/auth/auth-service.js";
import { UnauthorizedError } from "../../../src/errors.js";
import { clientAddressReader } from "../../hono/caller/client-address-reader.js";
import type { DashboardDeps } from "../dashboard-env.js";
import { formText, readForm } from "../forms.js";
import { SignInLinkPage, SignInPage } from "../pages/sign-in-pages.js";
import { readSessionCookie, type SessionCookie, writeSessionCookie } from "../session-cookie.js";
import { safeNext } from "../session-middleware.js";

/**
 * Sign-in without a session: email and password, and the one-time link `sluice serve`
 * prints (shown as a page with a button, so a link preview cannot use it up).
 */
export function signInRoutes(deps: DashboardDeps, cookie: SessionCookie): Hono {
  const routes = new Hono();
  const addressOf = deps.remoteAddress ?? clientAddressReader();

  function startSession(c: Context, started: StartedSession, to: string) {
    writeSessionCookie(
      c,
      cookie,
      started.sessionId,
      Math.floor(deps.auth.policy.absoluteMs / 1000),
    );
    return c.redirect(to, 303);
  }

  routes.get("/sign-in", async (c) => {
    const next = safeNext(c.req.query("next"));
    // Signed in meanwhile (a one-time link opened in another tab): reloading this page goes on
    // to the page asked for (a consent page, say) instead of asking again.
    if (await deps.auth.authenticate(readSessionCookie(c, cookie))) return c.redirect(next, 303);
    return c.html(<SignInPage next={next} />);
  });

  routes.post("/sign-in", async (c) => {
    const form = await readForm(c);
    const email = formText(form, "email");
    const next = safeNext(formText(form, "next"));
    try {
      const started = await deps.auth.signIn({
        email,
        password: formText(form, "password"),
        address: addressOf(c),
      });
      return startSession(c, started, next);
    } catch (error) {
      if (error instanceof SignInThrottledError) {
        c.header("Retry-After", String(Math.ceil(error.retryAfterMs / 1000)));
        return c.html(<SignInPage next={next} email={email} error={error.message} />, 429);
      }
      if (error instanceof UnauthorizedError) {
        return c.html(<SignInPage next={next} email={email} error={error.message} />, 401);
      }
      throw error;
    }
  });

  routes.get("/sign-in/link", (c) => c.html(<SignInLinkPage token={c.req.query("token") ?? ""} />));

  routes.post("/sign-in/link", async (c) => {
    const form = await readForm(c);
    try {
      const started = await deps.auth.redeemSignInLink(formText(form, "token"));
      return startSession(c, started, "/account?welcome=1");
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      return c.html(<SignInLinkPage token="" error={error.message} />, 401);
    }
  });
  return routes;
}
