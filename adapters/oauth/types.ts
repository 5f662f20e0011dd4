import type { OAuthScope } from "./scopes.js";

/*
 * Storage shapes of the OAuth authorization server. Codes and tokens are never stored, only
 * their SHA-256 hashes; a grant is one consent (user, team, client, scopes, resource).
 */

/** A client registered through Dynamic Client Registration (RFC 7591). */
export interface OAuthClientRecord {
  clientId: string;
  clientName: string;
  /** Exact redirect URIs (https, or http on a loopback host). */
  redirectUris: string[];
  createdAt: number;
}

/** One consent: what a user let a client do in one team, until revoked. */
export interface OAuthGrantRecord {
  id: number;
  userId: number;
  teamId: number;
  clientId: string;
  /** The client's name at consent (a metadata document may change later). */
  clientName: string;
  /** Host of the redirect URI the consent was given for. */
  redirectHost: string;
  scopes: OAuthScope[];
  /** RFC 8707 resource the grant's tokens are bound to: `{base_url}/mcp`. */
  resource: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** An authorization code: single use, short-lived. */
export interface AuthorizationCodeRecord {
  /** Hex SHA-256 of the code. */
  codeHash: string;
  grantId: number;
  clientId: string;
  redirectUri: string;
  /** PKCE S256 challenge (base64url SHA-256 of the verifier). */
  codeChallenge: string;
  expiresAt: number;
  usedAt: number | null;
}

export type OAuthTokenKind = "access" | "refresh";

/** An access or refresh token; a refresh token is used once (rotation). */
export interface OAuthTokenRecord {
  /** Hex SHA-256 of the token. */
  tokenHash: string;
  kind: OAuthTokenKind;
  grantId: number;
  scopes: OAuthScope[];
  expiresAt: number;
  usedAt: number | null;
}

/**
 * Persistence of the authorization server. Two implementations pass one contract suite
 * (`test/oauth/oauth-store-contract.ts`): memory (`memory-oauth-store.ts`) and SQLite
 * (`adapters/sqlite/sqlite-oauth-store.ts`). Every method returns a Promise, so a store on a
 * network database fits the same interface.
 */
export interface OAuthStore {
  insertClient(client: OAuthClientRecord): Promise<void>;
  getClient(clientId: string): Promise<OAuthClientRecord | undefined>;
  /**
   * Deletes registered clients created before `createdBefore` that no grant names (never
   * used, revoked or not); returns how many went.
   */
  pruneUnusedClients(createdBefore: number): Promise<number>;

  insertGrant(grant: Omit<OAuthGrantRecord, "id">): Promise<OAuthGrantRecord>;
  getGrant(grantId: number): Promise<OAuthGrantRecord | undefined>;
  /** The user's grants in the team that are not revoked, newest first. */
  listGrants(teamId: number, userId: number): Promise<OAuthGrantRecord[]>;
  /**
   * Revokes a grant and deletes its codes and tokens. False when there is no such grant or
   * it was revoked already.
   */
  revokeGrant(grantId: number, at: number): Promise<boolean>;
  touchGrant(grantId: number, at: number): Promise<void>;

  insertCode(code: AuthorizationCodeRecord): Promise<void>;
  /**
   * Marks a code used and returns it as it was before: `usedAt` null for the one caller that
   * used it, the earlier time for any replay; undefined for an unknown code.
   */
  useCode(codeHash: string, at: number): Promise<AuthorizationCodeRecord | undefined>;

  insertToken(token: OAuthTokenRecord): Promise<void>;
  findToken(tokenHash: string): Promise<OAuthTokenRecord | undefined>;
  /** Marks a token used: true for the first caller only. */
  useToken(tokenHash: string, at: number): Promise<boolean>;
  /** Deletes codes and tokens that expired before `now`; returns how many went. */
  pruneExpired(now: number): Promise<number>;
  /**
   * Deletes grants created before `createdBefore` that no code or token names any more: a
   * consent whose code expired unused (Allow clicked twice, a client that crashed), one whose
   * tokens all expired, a revoked one. None can be used again, so "Connected apps" stops
   * listing them. Returns how many went.
   */
  pruneDeadGrants(createdBefore: number): Promise<number>;
}
