import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";

/** The session cookie's name and attributes for a base URL. */
export interface SessionCookie {
  name: string;
  secure: boolean;
}

/**
 * `__Host-sluice_session` (Secure, Path=/, no Domain: no other host can set or read it) when
 * the dashboard is served over https; `sluice_session` over plain http (localhost), where a
 * browser would drop a Secure cookie.
 *
 * @example
 * ```ts
 * sessionCookieFor("https://sluice.example.com").name; // "__Host-sluice_session"
 * ```
 */
export function sessionCookieFor(baseUrl: string): SessionCookie {
  const secure = new URL(baseUrl).protocol === "https:";
  return { name: secure ? "__Host-sluice_session" : "sluice_session", secure };
}

/** The session id the request's cookie carries, if any. */
export function readSessionCookie(c: Context, cookie: SessionCookie): string | undefined {
  return getCookie(c, cookie.name);
}

/** HttpOnly (no script reads it), SameSite=Lax (no cross-site posts carry it). */
export function writeSessionCookie(
  c: Context,
  cookie: SessionCookie,
  sessionId: string,
  maxAgeSeconds: number,
): void {
  setCookie(c, cookie.name, sessionId, {
    httpOnly: true,
    sameSite: "Lax",
    secure: cookie.secure,
    path: "/",
    maxAge: maxAgeSeconds,
  });
}

/** Tells the browser to drop the session cookie (sign-out). */
export function clearSessionCookie(c: Context, cookie: SessionCookie): void {
  deleteCookie(c, cookie.name, {
    path: "/",
    secure: cookie.secure,
    httpOnly: true,
    sameSite: "Lax",
  });
}
