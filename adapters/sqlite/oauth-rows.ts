import type { OAuthScope } from "../oauth/scopes.js";
import type { OAuthGrantRecord } from "../oauth/types.js";

/**
 * An OAuth grant as both SQL stores keep it (`oauth_grants`: snake_case columns, scopes as
 * JSON text), shared by the SQLite and PostgreSQL OAuth stores as `catalog-rows.ts` is by
 * their catalog stores.
 */
export interface GrantRow {
  id: number;
  user_id: number;
  team_id: number;
  client_id: string;
  client_name: string;
  redirect_host: string;
  scopes: string;
  resource: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/**
 * The grant record of a row of `oauth_grants`.
 *
 * @example
 * ```ts
 * const grant = grantFromRow(db.prepare("SELECT * FROM oauth_grants WHERE id = ?").get(id));
 * ```
 */
export function grantFromRow(row: GrantRow): OAuthGrantRecord {
  return {
    id: row.id,
    userId: row.user_id,
    teamId: row.team_id,
    clientId: row.client_id,
    clientName: row.client_name,
    redirectHost: row.redirect_host,
    scopes: JSON.parse(row.scopes) as OAuthScope[],
    resource: row.resource,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}
