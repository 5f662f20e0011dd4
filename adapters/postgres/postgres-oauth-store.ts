import type pg from "pg";
import type {
  AuthorizationCodeRecord,
  OAuthClientRecord,
  OAuthGrantRecord,
  OAuthStore,
  OAuthTokenRecord,
} from "../oauth/types.js";
import {
  type CodeRow,
  codeFromRow,
  DELETE_DEAD_GRANTS,
  type GrantRow,
  grantFromRow,
  type TokenRow,
  tokenFromRow,
} from "../sqlite/oauth-rows.js";
import { withTransaction } from "./connect.js";
import { translated } from "./postgres-errors.js";

/**
 * The MCP endpoint's OAuth clients, grants, codes and tokens in PostgreSQL, so an assistant's
 * token works on every server of a fleet. Codes and tokens are stored as hashes; a code or a
 * refresh token is used once even when two servers race for it (row locks, `used_at IS NULL`).
 *
 * @example
 * ```ts
 * const oauth = createOAuthApp({ store: new PostgresOAuthStore(pool), catalog, sessions, clock, issuer });
 * ```
 */
export class PostgresOAuthStore implements OAuthStore {
  constructor(private readonly pool: pg.Pool) {}

  async insertClient(client: OAuthClientRecord): Promise<void> {
    await this.query(
      "OAuth client",
      `INSERT INTO oauth_clients (client_id, client_name, redirect_uris, created_at)
       VALUES ($1, $2, $3, $4)`,
      [client.clientId, client.clientName, JSON.stringify(client.redirectUris), client.createdAt],
    );
  }

  async getClient(clientId: string): Promise<OAuthClientRecord | undefined> {
    const { rows } = await this.query<{
      client_id: string;
      client_name: string;
      redirect_uris: string;
      created_at: number;
    }>("OAuth client", "SELECT * FROM oauth_clients WHERE client_id = $1", [clientId]);
    const row = rows[0];
    return (
      row && {
        clientId: row.client_id,
        clientName: row.client_name,
        redirectUris: JSON.parse(row.redirect_uris) as string[],
        createdAt: row.created_at,
      }
    );
  }

  async pruneUnusedClients(createdBefore: number): Promise<number> {
    const result = await this.query(
      "OAuth client",
      `DELETE FROM oauth_clients WHERE created_at < $1
       AND NOT EXISTS (SELECT 1 FROM oauth_grants WHERE oauth_grants.client_id = oauth_clients.client_id)`,
      [createdBefore],
    );
    return result.rowCount ?? 0;
  }

  async insertGrant(grant: Omit<OAuthGrantRecord, "id">): Promise<OAuthGrantRecord> {
    const { rows } = await this.query<GrantRow>(
      "OAuth grant",
      `INSERT INTO oauth_grants (user_id, team_id, client_id, client_name, redirect_host,
         scopes, resource, created_at, last_used_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
      [
        grant.userId,
        grant.teamId,
        grant.clientId,
        grant.clientName,
        grant.redirectHost,
        JSON.stringify(grant.scopes),
        grant.resource,
        grant.createdAt,
        grant.lastUsedAt,
        grant.revokedAt,
      ],
    );
    return grantFromRow(rows[0]!);
  }

  async getGrant(grantId: number): Promise<OAuthGrantRecord | undefined> {
    const { rows } = await this.query<GrantRow>(
      "OAuth grant",
      "SELECT * FROM oauth_grants WHERE id = $1",
      [grantId],
    );
    return rows[0] && grantFromRow(rows[0]);
  }

  async listGrants(teamId: number, userId: number): Promise<OAuthGrantRecord[]> {
    const { rows } = await this.query<GrantRow>(
      "OAuth grant",
      `SELECT * FROM oauth_grants WHERE team_id = $1 AND user_id = $2 AND revoked_at IS NULL
       ORDER BY id DESC`,
      [teamId, userId],
    );
    return rows.map(grantFromRow);
  }

  revokeGrant(grantId: number, at: number): Promise<boolean> {
    return this.transaction("OAuth grant", async (client) => {
      const revoked = await client.query(
        "UPDATE oauth_grants SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
        [at, grantId],
      );
      await client.query("DELETE FROM oauth_codes WHERE grant_id = $1", [grantId]);
      await client.query("DELETE FROM oauth_tokens WHERE grant_id = $1", [grantId]);
      return revoked.rowCount === 1;
    });
  }

  async touchGrant(grantId: number, at: number): Promise<void> {
    await this.query("OAuth grant", "UPDATE oauth_grants SET last_used_at = $1 WHERE id = $2", [
      at,
      grantId,
    ]);
  }

  async insertCode(code: AuthorizationCodeRecord): Promise<void> {
    await this.query(
      "authorization code",
      `INSERT INTO oauth_codes (code_hash, grant_id, client_id, redirect_uri, code_challenge,
         expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        code.codeHash,
        code.grantId,
        code.clientId,
        code.redirectUri,
        code.codeChallenge,
        code.expiresAt,
        code.usedAt,
      ],
    );
  }

  useCode(codeHash: string, at: number): Promise<AuthorizationCodeRecord | undefined> {
    return this.transaction("authorization code", async (client) => {
      // The row lock makes a second server's use wait, then see this one's used_at.
      const { rows } = await client.query<CodeRow>(
        "SELECT * FROM oauth_codes WHERE code_hash = $1 FOR UPDATE",
        [codeHash],
      );
      const row = rows[0];
      if (!row) return undefined;
      await client.query(
        "UPDATE oauth_codes SET used_at = $1 WHERE code_hash = $2 AND used_at IS NULL",
        [at, codeHash],
      );
      return codeFromRow(row);
    });
  }

  async insertToken(token: OAuthTokenRecord): Promise<void> {
    await this.query(
      "OAuth token",
      `INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, expires_at, used_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        token.tokenHash,
        token.kind,
        token.grantId,
        JSON.stringify(token.scopes),
        token.expiresAt,
        token.usedAt,
      ],
    );
  }

  async findToken(tokenHash: string): Promise<OAuthTokenRecord | undefined> {
    const { rows } = await this.query<TokenRow>(
      "OAuth token",
      "SELECT * FROM oauth_tokens WHERE token_hash = $1",
      [tokenHash],
    );
    const row = rows[0];
    return row && tokenFromRow(row);
  }

  async useToken(tokenHash: string, at: number): Promise<boolean> {
    const result = await this.query(
      "OAuth token",
      "UPDATE oauth_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL",
      [at, tokenHash],
    );
    return result.rowCount === 1;
  }

  pruneExpired(now: number): Promise<number> {
    return this.transaction("OAuth tokens", async (client) => {
      const codes = await client.query("DELETE FROM oauth_codes WHERE expires_at < $1", [now]);
      const tokens = await client.query("DELETE FROM oauth_tokens WHERE expires_at < $1", [now]);
      return (codes.rowCount ?? 0) + (tokens.rowCount ?? 0);
    });
  }

  async pruneDeadGrants(createdBefore: number): Promise<number> {
    const result = await this.query("OAuth grant", DELETE_DEAD_GRANTS, [createdBefore]);
    return result.rowCount ?? 0;
  }

  private query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    what: string,
    sql: string,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    return translated(what, () => this.pool.query<R>(sql, values));
  }

  private transaction<T>(what: string, body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return translated(what, () => withTransaction(this.pool, body));
  }
}
