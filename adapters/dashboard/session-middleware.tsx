import type { Context, MiddlewareHandler } from "hono";
import type { AuthService } from "../../src/auth/auth-service.js";
import type { DashboardEnv } from "./dashboard-env.js";
import { MessagePage } from "./pages/message-page.js";
import { readSessionCookie, type SessionCookie } from "./session-cookie.js";

/**
 * Where to go after signing in: a path of this site only (`/pool/llm`), never another host
 * (`//evil.test`, `/\\evil.test`), so the sign-in form is no open redirect.
 *
 * @example
 * ```ts
 * safeNext("/oauth/authorize?client_id=…"); // kept
 * safeNext("https://evil.test"); // "/"
 * ```
 */
export function safeNext(next: string | undefined | null): string {
  if (typeof next !== "string" || !next.startsWith("/")) return "/";
  if (next.startsWith("//") || next.startsWith("/\\") || /[\r\n]/.test(next)) return "/";
  return next;
}

/** The sign-in page that returns to `path` afterwards. */
export function signInUrl(path: string): string {
  return path === "/" ? "/sign-in" : `/sign-in?next=${encodeURIComponent(path)}`;
}

function pathWithQuery(c: Context): string {
  const url = new URL(c.req.url);
  return url.pathname + url.search;
}

/**
 * Requires a live session: sets `c.var.signedIn`, or sends the browser to sign in (and back
 * to the page afterwards; the OAuth consent page of the MCP server relies on that). htmx
 * polls get `HX-Redirect`, so an expired session leaves the page instead of going silent.
 *
 * @example
 * ```ts
 * app.use("/settings/*", requireSignIn(auth, cookie));
 * ```
 */
export function requireSignIn(
  auth: AuthService,
  cookie: SessionCookie,
): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    const signedIn = await auth.authenticate(readSessionCookie(c, cookie));
    if (signedIn) {
      c.set("signedIn", signedIn);
      c.header("Cache-Control", "no-store");
      return next();
    }
    if (c.req.header("hx-request") === "true") {
      // A poll of a fragment: back to the page it polls from, not to the fragment.
      const page = c.req.header("hx-current-url");
      const back = page && URL.canParse(page) ? new URL(page) : null;
      return c.body(null, 401, {
        "HX-Redirect": signInUrl(back ? back.pathname + back.search : "/"),
      });
    }
    const target = signInUrl(c.req.method === "GET" ? pathWithQuery(c) : "/");
    if (c.req.method === "GET" || c.req.method === "HEAD") return c.redirect(target, 303);
    return c.html(
      <MessagePage
        title="Signed out"
        message="Your session has ended. Sign in again."
        link={target}
      />,
      401,
    );
  };
}

/** The answer to a member asking to change something: the "Not allowed" page, 403. */
function notAllowed(c: Context<DashboardEnv>): Response | Promise<Response> {
  return c.html(
    <MessagePage
      title="Not allowed"
      signedIn={c.var.signedIn}
      message="Members can see everything of their team but change nothing. Ask an owner or admin."
    />,
    403,
  );
}

/**
 * Members see everything of their team and change nothing: every unsafe request of a member
 * is refused (403) before any handler runs.
 *
 * @example
 * ```ts
 * app.use(onlyManagersChange());
 * ```
 */
export function onlyManagersChange(): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD" || c.var.signedIn.role !== "member") return next();
    return notAllowed(c);
  };
}

/**
 * Pages only owners and admins have a use for (the forms creating a budget or a pool): a
 * member is refused (403) on opening them, not only on submitting.
 *
 * @example
 * ```ts
 * app.use("/pool/new", onlyManagers());
 * ```
 */
export function onlyManagers(): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => (c.var.signedIn.role === "member" ? notAllowed(c) : next());
}
