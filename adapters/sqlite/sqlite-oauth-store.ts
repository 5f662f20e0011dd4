import type Database from "better-sqlite3";
import type { Statement } from "better-sqlite3";
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
} from "./oauth-rows.js";
import { guardedWrite } from "./sqlite-errors.js";
import { StatementCache } from "./statement-cache.js";

/**
 * The {@link OAuthStore} on a Sluice database opened with `openSluiceDatabase` (its OAuth
 * tables; the caller closes the database). Single-use checks are one conditional UPDATE
 * each, so two processes on one file never both use a code or a refresh token.
 *
 * @example
 * ```ts
 * const store = new SqliteOAuthStore(openSluiceDatabase(join(dataDir, "sluice.db")));
 * ```
 */
export class SqliteOAuthStore implements OAuthStore {
  private readonly statements: StatementCache;

  constructor(private readonly database: Database.Database) {
    this.statements = new StatementCache(database);
  }

  async insertClient(client: OAuthClientRecord): Promise<void> {
    guardedWrite("OAuth client", () =>
      this.sql(
        `INSERT INTO oauth_clients (client_id, client_name, redirect_uris, created_at)
         VALUES (?, ?, ?, ?)`,
      ).run(
        client.clientId,
        client.clientName,
        JSON.stringify(client.redirectUris),
        client.createdAt,
      ),
    );
  }

  async getClient(clientId: string): Promise<OAuthClientRecord | undefined> {
    const row = this.sql("SELECT * FROM oauth_clients WHERE client_id = ?").get(clientId) as
      | { client_id: string; client_name: string; redirect_uris: string; created_at: number }
      | undefined;
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
    return guardedWrite(
      "OAuth client",
      () =>
        this.sql(
          `DELETE FROM oauth_clients WHERE created_at < ?
           AND NOT EXISTS (SELECT 1 FROM oauth_grants WHERE oauth_grants.client_id = oauth_clients.client_id)`,
        ).run(createdBefore).changes,
    );
  }

  async insertGrant(grant: Omit<OAuthGrantRecord, "id">): Promise<OAuthGrantRecord> {
    const result = guardedWrite("OAuth grant", () =>
      this.sql(
        `INSERT INTO oauth_grants (user_id, team_id, client_id, client_name, redirect_host,
           scopes, resource, created_at, last_used_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
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
      ),
    );
    return { ...grant, scopes: [...grant.scopes], id: Number(result.lastInsertRowid) };
  }

  async getGrant(grantId: number): Promise<OAuthGrantRecord | undefined> {
    const row = this.sql("SELECT * FROM oauth_grants WHERE id = ?").get(grantId) as
      | GrantRow
      | undefined;
    return row && grantFromRow(row);
  }

  async listGrants(teamId: number, userId: number): Promise<OAuthGrantRecord[]> {
    const rows = this.sql(
      `SELECT * FROM oauth_grants WHERE team_id = ? AND user_id = ? AND revoked_at IS NULL
       ORDER BY id DESC`,
    ).all(teamId, userId) as GrantRow[];
    return rows.map(grantFromRow);
  }

  async revokeGrant(grantId: number, at: number): Promise<boolean> {
    return guardedWrite("OAuth grant", () =>
      this.database
        .transaction(() => {
          const revoked = this.sql(
            "UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
          ).run(at, grantId);
          this.sql("DELETE FROM oauth_codes WHERE grant_id = ?").run(grantId);
          this.sql("DELETE FROM oauth_tokens WHERE grant_id = ?").run(grantId);
          return revoked.changes === 1;
        })
        .immediate(),
    );
  }

  async touchGrant(grantId: number, at: number): Promise<void> {
    guardedWrite("OAuth grant", () =>
      this.sql("UPDATE oauth_grants SET last_used_at = ? WHERE id = ?").run(at, grantId),
    );
  }

  async insertCode(code: AuthorizationCodeRecord): Promise<void> {
    guardedWrite("authorization code", () =>
      this.sql(
        `INSERT INTO oauth_codes (code_hash, grant_id, client_id, redirect_uri, code_challenge,
           expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        code.codeHash,
        code.grantId,
        code.clientId,
        code.redirectUri,
        code.codeChallenge,
        code.expiresAt,
        code.usedAt,
      ),
    );
  }

  async useCode(codeHash: string, at: number): Promise<AuthorizationCodeRecord | undefined> {
    return guardedWrite("authorization code", () =>
      this.database
        .transaction(() => {
          const row = this.sql("SELECT * FROM oauth_codes WHERE code_hash = ?").get(codeHash) as
            | CodeRow
            | undefined;
          if (!row) return undefined;
          this.sql(
            "UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL",
          ).run(at, codeHash);
          return codeFromRow(row);
        })
        .immediate(),
    );
  }

  async insertToken(token: OAuthTokenRecord): Promise<void> {
    guardedWrite("OAuth token", () =>
      this.sql(
        `INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, expires_at, used_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ).run(
        token.tokenHash,
        token.kind,
        token.grantId,
        JSON.stringify(token.scopes),
        token.expiresAt,
        token.usedAt,
      ),
    );
  }

  async findToken(tokenHash: string): Promise<OAuthTokenRecord | undefined> {
    const row = this.sql("SELECT * FROM oauth_tokens WHERE token_hash = ?").get(tokenHash) as
      | TokenRow
      | undefined;
    return row && tokenFromRow(row);
  }

  async useToken(tokenHash: string, at: number): Promise<boolean> {
    const result = guardedWrite("OAuth token", () =>
      this.sql("UPDATE oauth_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL").run(
        at,
        tokenHash,
      ),
    );
    return result.changes === 1;
  }

  async pruneExpired(now: number): Promise<number> {
    return guardedWrite("OAuth tokens", () =>
      this.database.transaction(
        () =>
          this.sql("DELETE FROM oauth_codes WHERE expires_at < ?").run(now).changes +
          this.sql("DELETE FROM oauth_tokens WHERE expires_at < ?").run(now).changes,
      )(),
    );
  }

  async pruneDeadGrants(createdBefore: number): Promise<number> {
    return guardedWrite(
      "OAuth grant",
      () => this.sql(DELETE_DEAD_GRANTS.replace("$1", "?")).run(createdBefore).changes,
    );
  }

  private sql(source: string): Statement {
    return this.statements.get(source);
  }
}
