import type { ConnectedApps } from "../../src/auth/auth-service.js";
import type { OAuthStore } from "./types.js";

/**
 * The MCP clients people connected, as the sign-in service ends them when a member leaves a
 * team: every live grant of theirs there is revoked, with its codes and tokens. The store is
 * asked for on first use (a server on PostgreSQL opens no SQLite file for it).
 *
 * @example
 * ```ts
 * new AuthService({ store, catalog, clock, connectedApps: connectedAppsIn(() => oauthStore) });
 * ```
 */
export function connectedAppsIn(store: () => OAuthStore): ConnectedApps {
  return {
    async revokeAllOf(teamId, userId, at) {
      let revoked = 0;
      for (const grant of await store().listGrants(teamId, userId)) {
        if (await store().revokeGrant(grant.id, at)) revoked += 1;
      }
      return revoked;
    },
  };
}
