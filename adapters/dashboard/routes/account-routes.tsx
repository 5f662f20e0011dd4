import { Hono } from "hono";
import type { SignedIn } from "../../../src/auth/auth-service.js";
import { passwordIssue } from "../../../src/auth/passwords.js";
import type { DashboardDeps, DashboardEnv } from "../dashboard-env.js";
import {
  type FieldErrorMap,
  fieldErrorsOf,
  formText,
  passwordsDiffer,
  readForm,
} from "../forms.js";
import { AccountPage } from "../pages/account-page.js";
import {
  clearSessionCookie,
  readSessionCookie,
  type SessionCookie,
  writeSessionCookie,
} from "../session-cookie.js";

/** The signed-in person's own account: switch team, password, sign out here or everywhere. */
export function accountRoutes(deps: DashboardDeps, cookie: SessionCookie): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  const teamsOf = (signedIn: SignedIn) => deps.auth.teamsOf(signedIn.user.id);

  routes.get("/account", async (c) => {
    const signedIn = c.var.signedIn;
    const hasPassword = await deps.auth.hasPassword(signedIn.user.id);
    return c.html(
      <AccountPage
        signedIn={signedIn}
        teams={await teamsOf(signedIn)}
        hasPassword={hasPassword}
        welcome={c.req.query("welcome") === "1"}
      />,
    );
  });

  routes.post("/account/team", async (c) => {
    const signedIn = c.var.signedIn;
    const teamId = Number(formText(await readForm(c), "team"));
    const started = Number.isSafeInteger(teamId)
      ? await deps.auth.switchTeam(signedIn.session, teamId)
      : null;
    // Not a team of theirs (or gone since the page was shown): the same 404 as any other team's.
    if (!started) return c.notFound();
    const secondsLeft = Math.max(
      1,
      Math.floor((started.session.expiresAt - deps.clock.now()) / 1000),
    );
    writeSessionCookie(c, cookie, started.sessionId, secondsLeft);
    return c.redirect("/", 303);
  });

  routes.post("/account/password", async (c) => {
    const signedIn = c.var.signedIn;
    const form = await readForm(c);
    const password = formText(form, "password");
    // Both errors in one round: a short password typed twice differently gets both.
    const differ = passwordsDiffer(form);
    const tooWeak = passwordIssue(password);
    let errors: FieldErrorMap | null =
      differ || tooWeak ? { ...(tooWeak ? { password: [tooWeak] } : {}), ...differ } : null;
    errors ??= await fieldErrorsOf(() => deps.auth.setPassword(signedIn.user.id, password));
    if (errors) {
      const hasPassword = await deps.auth.hasPassword(signedIn.user.id);
      return c.html(
        <AccountPage
          signedIn={signedIn}
          teams={await teamsOf(signedIn)}
          hasPassword={hasPassword}
          errors={errors}
        />,
        422,
      );
    }
    // As `sluice user set-password` does, but this browser stays signed in.
    const ended = await deps.auth.endOtherSessions(signedIn.session);
    return c.html(
      <AccountPage
        signedIn={signedIn}
        teams={await teamsOf(signedIn)}
        hasPassword={true}
        saved={true}
        endedSessions={ended}
      />,
    );
  });

  routes.post("/sign-out", async (c) => {
    await deps.auth.signOut(readSessionCookie(c, cookie) ?? "");
    clearSessionCookie(c, cookie);
    return c.redirect("/sign-in", 303);
  });

  routes.post("/account/sign-out-everywhere", async (c) => {
    await deps.auth.signOutEverywhere(c.var.signedIn.user.id);
    clearSessionCookie(c, cookie);
    return c.redirect("/sign-in", 303);
  });
  return routes;
}
