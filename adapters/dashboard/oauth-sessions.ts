import type { AuthService } from "../../src/auth/auth-service.js";
import type { OAuthSessions } from "../oauth/session.js";
import { readSessionCookie, sessionCookieFor } from "./session-cookie.js";
import { signInUrl } from "./session-middleware.js";

/**
 * The dashboard's sessions for the MCP server's OAuth pages (consent, Connected apps): the
 * person signed in to the dashboard, and its sign-in page, which returns to the page asked for.
 *
 * @example
 * ```ts
 * assistantAppForServer({ sessions: dashboardSessions(deps.auth, deps.config.baseUrl) })(deps);
 * ```
 */
export function dashboardSessions(auth: AuthService, baseUrl: string): OAuthSessions {
  const cookie = sessionCookieFor(baseUrl);
  return {
    async currentUser(c) {
      const signedIn = await auth.authenticate(readSessionCookie(c, cookie));
      return (
        signedIn && { userId: signedIn.user.id, teamId: signedIn.team.id, role: signedIn.role }
      );
    },
    signInUrl,
  };
}
