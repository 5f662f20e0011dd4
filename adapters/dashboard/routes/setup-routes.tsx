import { Hono } from "hono";
import type { StartedSession } from "../../../src/auth/auth-service.js";
import { FirstRunSetup, SETUP_LINK_REFUSED } from "../../../src/auth/first-run-setup.js";
import { groupIssuesByField } from "../../../src/catalog/validation.js";
import { ConflictError, UnauthorizedError } from "../../../src/errors.js";
import type { DashboardDeps } from "../dashboard-env.js";
import {
  type FieldErrorMap,
  fieldErrorsOf,
  formText,
  passwordsDiffer,
  readForm,
} from "../forms.js";
import { MessagePage } from "../pages/message-page.js";
import { SetupPage } from "../pages/setup-page.js";
import { type SessionCookie, writeSessionCookie } from "../session-cookie.js";

const SET_UP_ALREADY = "Sluice is set up already: a team exists. Sign in instead.";

/**
 * First run (`/setup?token=…`, printed by `sluice serve` while there is no team): creates
 * the first team with the visitor as owner, signs them in and lands on the overview. Refused
 * once any team exists.
 */
export function setupRoutes(deps: DashboardDeps, cookie: SessionCookie): Hono {
  const routes = new Hono();
  const setup = new FirstRunSetup(deps.auth, deps.catalog);

  const setUpAlready = () => (
    <MessagePage title="Set up already" message={SET_UP_ALREADY} link="/sign-in" />
  );
  const linkDead = (message: string) => (
    <MessagePage title="Setup link expired" message={message} link="/sign-in" />
  );

  routes.get("/setup", async (c) => {
    const token = c.req.query("token") ?? "";
    if (!(await setup.isOpen())) return c.html(setUpAlready(), 409);
    if (!(await setup.accepts(token))) return c.html(linkDead(SETUP_LINK_REFUSED), 401);
    return c.html(<SetupPage token={token} />);
  });

  routes.post("/setup", async (c) => {
    const form = await readForm(c);
    const token = formText(form, "token");
    const values = {
      teamName: formText(form, "teamName"),
      slug: formText(form, "slug"),
      ownerName: formText(form, "ownerName"),
      ownerEmail: formText(form, "ownerEmail"),
    };
    const password = formText(form, "password");
    const differ = passwordsDiffer(form);
    let errors: FieldErrorMap | null = null;
    let started: StartedSession | undefined;
    try {
      if (differ) {
        // Every other error in the same round, not one after another.
        errors = { ...groupIssuesByField(setup.inputIssues({ ...values, password })), ...differ };
      } else {
        errors = await fieldErrorsOf(async () => {
          started = await setup.createFirstTeam(token, { ...values, password });
        });
      }
    } catch (error) {
      if (error instanceof ConflictError) return c.html(setUpAlready(), 409);
      if (!(error instanceof UnauthorizedError)) throw error;
      return c.html(linkDead(error.message), 401);
    }
    if (errors || !started) {
      return c.html(<SetupPage token={token} values={values} errors={errors ?? {}} />, 422);
    }
    writeSessionCookie(
      c,
      cookie,
      started.sessionId,
      Math.floor(deps.auth.policy.absoluteMs / 1000),
    );
    return c.redirect("/", 303);
  });
  return routes;
}
