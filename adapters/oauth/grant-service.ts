import { hashSecret, secretsEqual } from "../../src/catalog/secrets.js";
import type { CatalogStore } from "../../src/catalog/types.js";
import type { Clock } from "../../src/clock/clock.js";
import { StoreUnavailableError } from "../../src/errors.js";
import { type AuthorizationRequest, sameResource } from "./authorization-request.js";
import { OAuthProtocolError } from "./oauth-error.js";
import {
  ACCESS_TOKEN_PREFIX,
  CODE_PREFIX,
  newOAuthSecret,
  pkceMatches,
  REFRESH_TOKEN_PREFIX,
} from "./oauth-secrets.js";
import { redirectHost } from "./redirect-uris.js";
import { type OAuthScope, parseScope, scopesForRole } from "./scopes.js";
import type { SessionUser } from "./session.js";
import type { OAuthGrantRecord, OAuthStore } from "./types.js";

/** Lifetimes: codes are exchanged at once; access tokens are short; refresh tokens rotate. */
export const CODE_TTL_MS = 60_000;
export const ACCESS_TOKEN_TTL_MS = 3_600_000;
export const REFRESH_TOKEN_TTL_MS = 30 * 86_400_000;
/**
 * How old a grant with no code or token left must be to go: its code is written just after
 * it, so a younger one may be a consent still on its way (servers of a fleet whose clocks
 * differ a little included).
 */
const DEAD_GRANT_MIN_AGE_MS = 2 * CODE_TTL_MS;
/** lastUsedAt of a grant is informational: written at most once a minute. */
const TOUCH_INTERVAL_MS = 60_000;

/** The token endpoint's success body (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** An access token that passed every check, with what it may do now. */
export interface VerifiedAccess {
  grant: OAuthGrantRecord;
  /** The token's scopes that the user's role still allows. */
  scopes: OAuthScope[];
  expiresAt: number;
}

export interface GrantServiceDeps {
  store: OAuthStore;
  catalog: CatalogStore;
  clock: Clock;
}

/**
 * Grants, codes and tokens: what happens between a consent and an API call. Every secret is
 * stored as its SHA-256 hash; every use checks expiry, the grant, the resource and the
 * user's current membership and role, so leaving a team or a demotion takes effect at once.
 *
 * @example
 * ```ts
 * const grants = new GrantService({ store, catalog: catalog.store, clock });
 * const access = await grants.verifyAccessToken(bearer);
 * ```
 */
export class GrantService {
  private lastPrune = 0;

  constructor(private readonly deps: GrantServiceDeps) {}

  /** The scopes the user may grant in the team now (none when no longer a member). */
  async allowedScopes(teamId: number, userId: number): Promise<OAuthScope[]> {
    const membership = await this.deps.catalog.getMembership(teamId, userId);
    return membership ? scopesForRole(membership.role) : [];
  }

  /** Records a consent and issues its single-use code. Returns the code. */
  async approve(request: AuthorizationRequest, user: SessionUser): Promise<string> {
    const allowed = await this.allowedScopes(user.teamId, user.userId);
    const scopes = request.scopes.filter((scope) => allowed.includes(scope));
    if (scopes.length === 0) {
      throw new OAuthProtocolError("invalid_scope", "Your role allows none of these scopes.");
    }
    const now = this.deps.clock.now();
    const grant = await this.deps.store.insertGrant({
      userId: user.userId,
      teamId: user.teamId,
      clientId: request.clientId,
      clientName: request.clientName,
      redirectHost: redirectHost(request.redirectUri),
      scopes,
      resource: request.resource,
      createdAt: now,
      lastUsedAt: null,
      revokedAt: null,
    });
    const code = newOAuthSecret(CODE_PREFIX);
    await this.deps.store.insertCode({
      codeHash: hashSecret(code),
      grantId: grant.id,
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      expiresAt: now + CODE_TTL_MS,
      usedAt: null,
    });
    return code;
  }

  /** `grant_type=authorization_code` (RFC 6749 §4.1.3 with PKCE, RFC 7636 §4.6). */
  async exchangeCode(form: URLSearchParams): Promise<TokenResponse> {
    const code = required(form, "code");
    const clientId = required(form, "client_id");
    const verifier = required(form, "code_verifier");
    const now = this.deps.clock.now();
    const record = await this.deps.store.useCode(hashSecret(code), now);
    if (!record || !secretsEqual(record.codeHash, hashSecret(code))) {
      throw invalidGrant("The authorization code is unknown.");
    }
    if (record.usedAt !== null) {
      // RFC 6749 §4.1.2: a replayed code may be stolen, so what it gave is taken back.
      await this.deps.store.revokeGrant(record.grantId, now);
      throw invalidGrant("The authorization code was already used; its grant is revoked.");
    }
    if (now >= record.expiresAt) throw invalidGrant("The authorization code has expired.");
    if (record.clientId !== clientId) throw invalidGrant("The code was issued to another client.");
    if (form.get("redirect_uri") !== record.redirectUri) {
      throw invalidGrant("redirect_uri does not match the authorization request.");
    }
    if (!pkceMatches(verifier, record.codeChallenge)) {
      throw invalidGrant("The PKCE code_verifier does not match the code_challenge.");
    }
    const grant = await this.liveGrant(record.grantId);
    this.checkResource(form, grant);
    return this.issueTokens(grant, await this.currentScopes(grant, grant.scopes));
  }

  /** `grant_type=refresh_token` with rotation; a reused refresh token revokes the grant. */
  async refresh(form: URLSearchParams): Promise<TokenResponse> {
    const presented = required(form, "refresh_token");
    const clientId = required(form, "client_id");
    const now = this.deps.clock.now();
    const hash = hashSecret(presented);
    const token = await this.deps.store.findToken(hash);
    if (token?.kind !== "refresh") throw invalidGrant("The refresh token is unknown.");
    const grant = await this.liveGrant(token.grantId);
    if (grant.clientId !== clientId) throw invalidGrant("The token was issued to another client.");
    if (now >= token.expiresAt) throw invalidGrant("The refresh token has expired.");
    if (token.usedAt !== null) return this.refreshReused(grant.id, now);
    // Everything that can refuse the request is checked before the token is spent, so a
    // client that asked wrongly can try again with the same token.
    this.checkResource(form, grant);
    let scopes = token.scopes;
    if (form.has("scope")) {
      const asked = parseScope(form.get("scope"));
      if (asked.unknown.length > 0 || asked.scopes.some((scope) => !scopes.includes(scope))) {
        throw new OAuthProtocolError("invalid_scope", "A refresh may only narrow the scopes.");
      }
      scopes = asked.scopes;
    }
    const current = await this.currentScopes(grant, scopes);
    if (!(await this.deps.store.useToken(hash, now))) return this.refreshReused(grant.id, now);
    return this.issueTokens(grant, current);
  }

  /** A refresh token used twice was copied: the grant goes, for both holders. */
  private async refreshReused(grantId: number, now: number): Promise<never> {
    await this.deps.store.revokeGrant(grantId, now);
    throw invalidGrant("The refresh token was already used; its grant is revoked.");
  }

  /** Resolves a bearer access token; `invalid_token` for anything that is not usable now. */
  async verifyAccessToken(presented: string): Promise<VerifiedAccess> {
    const invalid = (why: string) => new OAuthProtocolError("invalid_token", why, 401);
    if (!presented.startsWith(ACCESS_TOKEN_PREFIX)) throw invalid("Not a Sluice MCP token.");
    const token = await this.deps.store.findToken(hashSecret(presented));
    if (token?.kind !== "access") throw invalid("The access token is unknown or revoked.");
    const now = this.deps.clock.now();
    if (now >= token.expiresAt) throw invalid("The access token has expired.");
    const grant = await this.deps.store.getGrant(token.grantId);
    if (!grant || grant.revokedAt !== null) throw invalid("The access token has been revoked.");
    const allowed = await this.allowedScopes(grant.teamId, grant.userId);
    if (allowed.length === 0) throw invalid("The user is no longer a member of the team.");
    if (grant.lastUsedAt === null || now - grant.lastUsedAt >= TOUCH_INTERVAL_MS) {
      // lastUsedAt is informational: a database busy with another writer must not fail a call.
      await this.deps.store.touchGrant(grant.id, now).catch((error: unknown) => {
        if (!(error instanceof StoreUnavailableError)) throw error;
      });
    }
    const scopes = token.scopes.filter((scope) => allowed.includes(scope));
    return { grant, scopes, expiresAt: token.expiresAt };
  }

  /** RFC 7009: revoking any token of a grant revokes the grant; unknown tokens are ignored. */
  async revokeToken(form: URLSearchParams): Promise<void> {
    const presented = required(form, "token");
    const clientId = required(form, "client_id");
    const token = await this.deps.store.findToken(hashSecret(presented));
    if (!token) return;
    const grant = await this.deps.store.getGrant(token.grantId);
    if (grant && grant.clientId === clientId) {
      await this.deps.store.revokeGrant(grant.id, this.deps.clock.now());
    }
  }

  /** The user's connected apps in the team. */
  async listGrants(user: SessionUser): Promise<OAuthGrantRecord[]> {
    // Grants nothing can use any more are not shown as connected apps.
    await this.pruneNow(this.deps.clock.now());
    return this.deps.store.listGrants(user.teamId, user.userId);
  }

  /** Revokes one of the user's grants at once; false when it is not theirs or already gone. */
  async revokeGrant(user: SessionUser, grantId: number): Promise<boolean> {
    const grant = await this.deps.store.getGrant(grantId);
    if (!grant || grant.userId !== user.userId || grant.teamId !== user.teamId) return false;
    return this.deps.store.revokeGrant(grantId, this.deps.clock.now());
  }

  private async liveGrant(grantId: number): Promise<OAuthGrantRecord> {
    const grant = await this.deps.store.getGrant(grantId);
    if (!grant || grant.revokedAt !== null) throw invalidGrant("The grant has been revoked.");
    return grant;
  }

  private checkResource(form: URLSearchParams, grant: OAuthGrantRecord): void {
    for (const value of form.getAll("resource")) {
      if (!sameResource(value, grant.resource)) {
        throw new OAuthProtocolError("invalid_target", `The grant is for ${grant.resource}.`);
      }
    }
  }

  private async currentScopes(grant: OAuthGrantRecord, scopes: OAuthScope[]) {
    const allowed = await this.allowedScopes(grant.teamId, grant.userId);
    const current = scopes.filter((scope) => allowed.includes(scope));
    if (current.length === 0) throw invalidGrant("The user may no longer use this grant.");
    return current;
  }

  private async issueTokens(grant: OAuthGrantRecord, scopes: OAuthScope[]) {
    const now = this.deps.clock.now();
    const access = newOAuthSecret(ACCESS_TOKEN_PREFIX);
    const refresh = newOAuthSecret(REFRESH_TOKEN_PREFIX);
    await this.deps.store.insertToken({
      tokenHash: hashSecret(access),
      kind: "access",
      grantId: grant.id,
      scopes,
      expiresAt: now + ACCESS_TOKEN_TTL_MS,
      usedAt: null,
    });
    await this.deps.store.insertToken({
      tokenHash: hashSecret(refresh),
      kind: "refresh",
      grantId: grant.id,
      scopes,
      expiresAt: now + REFRESH_TOKEN_TTL_MS,
      usedAt: null,
    });
    await this.pruneNow(now);
    const response: TokenResponse = {
      access_token: access,
      token_type: "Bearer",
      expires_in: ACCESS_TOKEN_TTL_MS / 1000,
      refresh_token: refresh,
      scope: scopes.join(" "),
    };
    return response;
  }

  /**
   * Expired codes and tokens, then the grants left with none, go at most once a minute, on the
   * way of an issue or of the connected apps' list.
   */
  private async pruneNow(now: number): Promise<void> {
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    await this.deps.store.pruneExpired(now);
    await this.deps.store.pruneDeadGrants(now - DEAD_GRANT_MIN_AGE_MS);
  }
}

function required(form: URLSearchParams, name: string): string {
  const values = form.getAll(name);
  if (values.length !== 1 || values[0] === "") {
    throw new OAuthProtocolError(
      "invalid_request",
      values.length > 1 ? `${name} is repeated.` : `${name} is required.`,
    );
  }
  return values[0] as string;
}

function invalidGrant(description: string): OAuthProtocolError {
  return new OAuthProtocolError("invalid_grant", description);
}
