import type { OAuthScope } from "../oauth/scopes.js";
import type {
  AuthorizationCodeRecord,
  OAuthGrantRecord,
  OAuthTokenKind,
  OAuthTokenRecord,
} from "../oauth/types.js";

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

/** An authorization code as both SQL stores keep it (`oauth_codes`). */
export interface CodeRow {
  code_hash: string;
  grant_id: number;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  expires_at: number;
  used_at: number | null;
}

/**
 * The code record of a row of `oauth_codes`.
 *
 * @example
 * ```ts
 * const code = codeFromRow(row); // { codeHash, grantId, clientId, ... }
 * ```
 */
export function codeFromRow(row: CodeRow): AuthorizationCodeRecord {
  return {
    codeHash: row.code_hash,
    grantId: row.grant_id,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    codeChallenge: row.code_challenge,
    expiresAt: row.expires_at,
    usedAt: row.used_at,
  };
}

/** An access or refresh token as both SQL stores keep it (`oauth_tokens`; scopes as JSON text). */
export interface TokenRow {
  token_hash: string;
  kind: OAuthTokenKind;
  grant_id: number;
  scopes: string;
  expires_at: number;
  used_at: number | null;
}

/**
 * The token record of a row of `oauth_tokens`.
 *
 * @example
 * ```ts
 * const token = tokenFromRow(row); // { tokenHash, kind: "access", scopes: [...], ... }
 * ```
 */
export function tokenFromRow(row: TokenRow): OAuthTokenRecord {
  return {
    tokenHash: row.token_hash,
    kind: row.kind,
    grantId: row.grant_id,
    scopes: JSON.parse(row.scopes) as OAuthScope[],
    expiresAt: row.expires_at,
    usedAt: row.used_at,
  };
}

/**
 * Deletes the grants created before `$1` that no code or token names any more (see
 * `OAuthStore.pruneDeadGrants`), in both SQL stores (SQLite binds `?` in place of `$1`).
 */
export const DELETE_DEAD_GRANTS = `DELETE FROM oauth_grants WHERE created_at < $1
  AND NOT EXISTS (SELECT 1 FROM oauth_codes WHERE oauth_codes.grant_id = oauth_grants.id)
  AND NOT EXISTS (SELECT 1 FROM oauth_tokens WHERE oauth_tokens.grant_id = oauth_grants.id)`;
