import type { Context } from "hono";
import type { Role } from "../../src/catalog/types.js";

/** The signed-in person of a dashboard session, in the team the session is working in. */
export interface SessionUser {
  userId: number;
  teamId: number;
  role: Role;
}

/**
 * What the authorization server needs from the dashboard's sign-in: who is signed in, and
 * where to send someone who is not. The dashboard provides it; tests provide a fixture.
 *
 * @example
 * ```ts
 * const sessions: OAuthSessions = {
 *   currentUser: async (c) => dashboardSessions.userOf(c),
 *   signInUrl: (returnTo) => `/sign-in?return_to=${encodeURIComponent(returnTo)}`,
 * };
 * ```
 */
export interface OAuthSessions {
  /** The request's signed-in user, or null without a valid session. */
  currentUser(c: Context): Promise<SessionUser | null>;
  /** Where to sign in, coming back to `returnTo` (a path on this server) afterwards. */
  signInUrl(returnTo: string): string;
}
