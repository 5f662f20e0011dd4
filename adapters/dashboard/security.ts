import type { MiddlewareHandler } from "hono";
import { csrf } from "hono/csrf";
import { secureHeaders } from "hono/secure-headers";

const SAFE_METHOD = /^(GET|HEAD|OPTIONS)$/;
const FORM_BODY = /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i;

/**
 * Security headers of every dashboard response. The CSP lets pages run only the dashboard's
 * own script files (no inline script, no eval, nothing from elsewhere), post forms only to
 * itself, and never be framed.
 *
 * @example
 * ```ts
 * app.use(dashboardSecureHeaders());
 * ```
 */
export function dashboardSecureHeaders(): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", "data:"],
      connectSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
    referrerPolicy: "same-origin",
  });
}

/**
 * CSRF protection for every unsafe method: `hono/csrf` (the request's `Origin` or
 * `Sec-Fetch-Site` must say it comes from the dashboard itself), and only form bodies:
 * hono/csrf checks just the content types a cross-site form can send, so any other body
 * is refused here rather than let through unchecked.
 *
 * @example
 * ```ts
 * app.use(dashboardCsrf("https://sluice.example.com"));
 * ```
 */
export function dashboardCsrf(baseUrl: string): MiddlewareHandler {
  const baseOrigin = new URL(baseUrl).origin;
  const originCheck = csrf({
    origin: (origin, c) => origin === baseOrigin || origin === new URL(c.req.url).origin,
  });
  return async (c, next) => {
    if (SAFE_METHOD.test(c.req.method)) return next();
    if (!FORM_BODY.test(c.req.header("content-type") ?? "")) {
      return c.text("The dashboard accepts form posts only.", 415);
    }
    return originCheck(c, next);
  };
}
