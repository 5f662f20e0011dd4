import type {
  AuthorizationCodeRecord,
  OAuthClientRecord,
  OAuthGrantRecord,
  OAuthStore,
  OAuthTokenRecord,
} from "./types.js";

/**
 * The reference {@link OAuthStore}: maps in memory, records copied in and out. For tests and
 * servers that need no persistence (every grant is lost on restart).
 *
 * @example
 * ```ts
 * const store = new MemoryOAuthStore();
 * const grant = await store.insertGrant({ ...consent, createdAt: Date.now(), lastUsedAt: null, revokedAt: null });
 * ```
 */
export class MemoryOAuthStore implements OAuthStore {
  private readonly clients = new Map<string, OAuthClientRecord>();
  private readonly grants = new Map<number, OAuthGrantRecord>();
  private readonly codes = new Map<string, AuthorizationCodeRecord>();
  private readonly tokens = new Map<string, OAuthTokenRecord>();
  private lastGrantId = 0;

  async insertClient(client: OAuthClientRecord): Promise<void> {
    this.clients.set(client.clientId, { ...client, redirectUris: [...client.redirectUris] });
  }

  async getClient(clientId: string): Promise<OAuthClientRecord | undefined> {
    const client = this.clients.get(clientId);
    return client && { ...client, redirectUris: [...client.redirectUris] };
  }

  async pruneUnusedClients(createdBefore: number): Promise<number> {
    const used = new Set([...this.grants.values()].map((grant) => grant.clientId));
    let pruned = 0;
    for (const [clientId, client] of this.clients) {
      if (client.createdAt < createdBefore && !used.has(clientId)) {
        this.clients.delete(clientId);
        pruned++;
      }
    }
    return pruned;
  }

  async insertGrant(grant: Omit<OAuthGrantRecord, "id">): Promise<OAuthGrantRecord> {
    const record = { ...grant, id: ++this.lastGrantId, scopes: [...grant.scopes] };
    this.grants.set(record.id, record);
    return copyGrant(record);
  }

  async getGrant(grantId: number): Promise<OAuthGrantRecord | undefined> {
    const grant = this.grants.get(grantId);
    return grant && copyGrant(grant);
  }

  async listGrants(teamId: number, userId: number): Promise<OAuthGrantRecord[]> {
    return [...this.grants.values()]
      .filter((g) => g.teamId === teamId && g.userId === userId && g.revokedAt === null)
      .sort((a, b) => b.id - a.id)
      .map(copyGrant);
  }

  async revokeGrant(grantId: number, at: number): Promise<boolean> {
    const grant = this.grants.get(grantId);
    if (!grant || grant.revokedAt !== null) return false;
    grant.revokedAt = at;
    for (const [hash, code] of this.codes) if (code.grantId === grantId) this.codes.delete(hash);
    for (const [hash, token] of this.tokens) {
      if (token.grantId === grantId) this.tokens.delete(hash);
    }
    return true;
  }

  async touchGrant(grantId: number, at: number): Promise<void> {
    const grant = this.grants.get(grantId);
    if (grant) grant.lastUsedAt = at;
  }

  async insertCode(code: AuthorizationCodeRecord): Promise<void> {
    this.codes.set(code.codeHash, { ...code });
  }

  async useCode(codeHash: string, at: number): Promise<AuthorizationCodeRecord | undefined> {
    const code = this.codes.get(codeHash);
    if (!code) return undefined;
    const before = { ...code };
    code.usedAt ??= at;
    return before;
  }

  async insertToken(token: OAuthTokenRecord): Promise<void> {
    this.tokens.set(token.tokenHash, { ...token, scopes: [...token.scopes] });
  }

  async findToken(tokenHash: string): Promise<OAuthTokenRecord | undefined> {
    const token = this.tokens.get(tokenHash);
    return token && { ...token, scopes: [...token.scopes] };
  }

  async useToken(tokenHash: string, at: number): Promise<boolean> {
    const token = this.tokens.get(tokenHash);
    if (!token || token.usedAt !== null) return false;
    token.usedAt = at;
    return true;
  }

  async pruneExpired(now: number): Promise<number> {
    let pruned = 0;
    for (const map of [this.codes, this.tokens] as Map<string, { expiresAt: number }>[]) {
      for (const [hash, record] of map) {
        if (record.expiresAt < now) {
          map.delete(hash);
          pruned++;
        }
      }
    }
    return pruned;
  }

  async pruneDeadGrants(createdBefore: number): Promise<number> {
    const named = new Set([...this.codes.values(), ...this.tokens.values()].map((r) => r.grantId));
    let pruned = 0;
    for (const [id, grant] of this.grants) {
      if (grant.createdAt < createdBefore && !named.has(id)) {
        this.grants.delete(id);
        pruned++;
      }
    }
    return pruned;
  }
}

function copyGrant(grant: OAuthGrantRecord): OAuthGrantRecord {
  return { ...grant, scopes: [...grant.scopes] };
}
