import { randomBytes } from "node:crypto";
import { hashSecret, hasSecretShape, secretsEqual } from "../catalog/secrets.js";
import { normalizeEmail } from "../catalog/teams.js";
import type { CatalogStore, Role, TeamRecord, UserRecord } from "../catalog/types.js";
import type { Clock } from "../clock/clock.js";
import { InvalidArgumentError, UnauthorizedError } from "../errors.js";
import { SignInThrottledError } from "./auth-errors.js";
import { type AuthPolicy, DEFAULT_AUTH_POLICY, SESSION_TOUCH_INTERVAL_MS } from "./auth-policy.js";
import {
  DEFAULT_PASSWORD_COST,
  hashPassword,
  type PasswordCost,
  verifyPassword,
} from "./passwords.js";
import type { AuthStore, SessionRecord } from "./types.js";

/** Prefix of a session id (the cookie's value), so a leaked one is recognisable. */
export const SESSION_ID_PREFIX = "slc_ses_";
/** Prefix of a one-time sign-in link's token. */
export const SIGN_IN_LINK_PREFIX = "slc_sil_";
/** How often sign-ins clear expired sessions, links and failure counts out of the store. */
const DELETE_EXPIRED_INTERVAL_MS = 60_000;

/** Dependencies of {@link AuthService}. */
export interface AuthServiceDeps {
  store: AuthStore;
  /** Users, teams and memberships (a session ends when its membership does). */
  catalog: CatalogStore;
  clock: Clock;
  /**
   * The applications people connected (the MCP server's OAuth grants), ended with the
   * membership they act through; without it (no MCP server) there are none to end.
   */
  connectedApps?: ConnectedApps;
  policy?: Partial<AuthPolicy>;
  /** scrypt cost of new hashes; default N=2^17, r=8, p=1. */
  passwordCost?: PasswordCost;
}

/** What a user delegated to applications in a team, as the server that keeps it can end it. */
export interface ConnectedApps {
  /** Revokes every grant of `userId` in `teamId` at `at`; returns how many. */
  revokeAllOf(teamId: number, userId: number, at: number): Promise<number>;
}

/** A signed-in person: who, in which team, with which role. */
export interface SignedIn {
  session: SessionRecord;
  user: UserRecord;
  team: TeamRecord;
  role: Role;
}

/** A new session: `sessionId` goes in the cookie, once; only its hash is stored. */
export interface StartedSession extends SignedIn {
  sessionId: string;
}

function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString("base64url");
}

/**
 * Dashboard sign-in over an {@link AuthStore}: passwords (scrypt), one-time sign-in links,
 * server-side sessions with idle and absolute expiry, and failed sign-ins throttled per
 * account and per address. Session ids and link tokens are stored hashed and compared in
 * constant time. The MCP consent page (issue 17) signs people in through the same sessions.
 *
 * @example
 * ```ts
 * const auth = new AuthService({ store: new MemoryAuthStore(), catalog: store, clock: systemClock });
 * const { sessionId } = await auth.signIn({ email: "ada@acme.test", password, address: "127.0.0.1" });
 * const signedIn = await auth.authenticate(sessionId); // { user, team, role, session }
 * ```
 */
export class AuthService {
  readonly policy: AuthPolicy;
  /** Where sign-in state lives (first-run setup links live there too). */
  readonly store: AuthStore;
  private readonly catalog: CatalogStore;
  private readonly clock: Clock;
  private readonly cost: PasswordCost;
  private readonly connectedApps: ConnectedApps | undefined;
  private lastDeletedExpiredAt = Number.NEGATIVE_INFINITY;

  constructor(deps: AuthServiceDeps) {
    this.store = deps.store;
    this.catalog = deps.catalog;
    this.clock = deps.clock;
    this.policy = { ...DEFAULT_AUTH_POLICY, ...deps.policy };
    this.cost = deps.passwordCost ?? DEFAULT_PASSWORD_COST;
    this.connectedApps = deps.connectedApps;
  }

  /** Sets (or replaces) a user's password; InvalidArgumentError `password: …` when too weak. */
  async setPassword(userId: number, password: string): Promise<void> {
    if (!(await this.catalog.getUser(userId))) throw new InvalidArgumentError("Unknown user.");
    await this.store.setPasswordHash(
      userId,
      await hashPassword(password, this.cost),
      this.clock.now(),
    );
  }

  async hasPassword(userId: number): Promise<boolean> {
    return (await this.store.getPasswordHash(userId)) !== undefined;
  }

  /** A one-time link token for a member of the team; expires after `policy.linkTtlMs`. */
  async createSignInLink(
    teamId: number,
    userId: number,
  ): Promise<{ token: string; expiresAt: number }> {
    if (!(await this.catalog.getMembership(teamId, userId))) {
      throw new InvalidArgumentError("The user is not a member of the team.");
    }
    const token = newSecret(SIGN_IN_LINK_PREFIX);
    const createdAt = this.clock.now();
    const expiresAt = createdAt + this.policy.linkTtlMs;
    await this.store.insertSignInLink({
      tokenHash: hashSecret(token),
      userId,
      teamId,
      createdAt,
      expiresAt,
    });
    return { token, expiresAt };
  }

  /** Signs in with a link token; it then no longer works. UnauthorizedError when used, expired or unknown. */
  async redeemSignInLink(token: string): Promise<StartedSession> {
    await this.deleteExpiredNowAndThen();
    const refused = new UnauthorizedError(
      "This sign-in link does not work: it was used already, has expired, or was mistyped.",
    );
    if (!hasSecretShape(token, SIGN_IN_LINK_PREFIX)) throw refused;
    const hash = hashSecret(token);
    const link = await this.store.consumeSignInLink(hash, this.clock.now());
    if (!link || !secretsEqual(link.tokenHash, hash)) throw refused;
    const started = await this.startSession(link.userId, link.teamId);
    if (!started) throw refused;
    return started;
  }

  /**
   * Signs in with email and password. Failures count per account and per address; past the
   * policy's limits a SignInThrottledError is thrown before the password is even checked.
   * A wrong email and a wrong password give the same UnauthorizedError, in the same time.
   */
  async signIn(input: {
    email: string;
    password: string;
    address: string | null;
  }): Promise<StartedSession> {
    await this.deleteExpiredNowAndThen();
    const now = this.clock.now();
    const email = normalizeEmail(input.email);
    const keys = [`account:${email}`, ...(input.address ? [`address:${input.address}`] : [])];
    const limits = [this.policy.accountLimit, this.policy.addressLimit];
    for (const [index, key] of keys.entries()) {
      const failures = await this.store.failures(key, now, this.policy.windowMs);
      if (failures.count >= limits[index]!) throw new SignInThrottledError(failures.endsAt - now);
    }
    const user = email === "" ? undefined : await this.catalog.findUserByEmail(email);
    const stored = user && (await this.store.getPasswordHash(user.id));
    const valid = await verifyPassword(input.password, stored, this.cost);
    const team = valid && user ? await this.firstTeamOf(user.id) : undefined;
    if (!user || !valid || !team) {
      for (const key of keys) await this.store.recordFailure(key, now, this.policy.windowMs);
      throw new UnauthorizedError("Wrong email or password.");
    }
    await this.store.clearFailures(keys[0]!);
    return (await this.startSession(user.id, team.id))!;
  }

  /**
   * The person behind a session id, or null when it is malformed, unknown, past its idle or
   * absolute expiry, or their membership of the team has ended (the session is then deleted).
   */
  async authenticate(sessionId: string | undefined | null): Promise<SignedIn | null> {
    if (typeof sessionId !== "string" || !hasSecretShape(sessionId, SESSION_ID_PREFIX)) return null;
    const hash = hashSecret(sessionId);
    const session = await this.store.findSession(hash);
    if (!session || !secretsEqual(session.idHash, hash)) return null;
    const now = this.clock.now();
    const member = await this.memberOf(session.userId, session.teamId);
    if (now >= session.expiresAt || now >= session.lastSeenAt + this.policy.idleMs || !member) {
      await this.store.deleteSession(hash);
      return null;
    }
    if (now - session.lastSeenAt >= SESSION_TOUCH_INTERVAL_MS) {
      await this.store.touchSession(hash, now);
      session.lastSeenAt = now;
    }
    return { session, ...member };
  }

  /** Ends one session (sign out here). */
  async signOut(sessionId: string): Promise<void> {
    if (hasSecretShape(sessionId, SESSION_ID_PREFIX))
      await this.store.deleteSession(hashSecret(sessionId));
  }

  /** Ends every session of the user, in every team (sign out everywhere); answers how many. */
  signOutEverywhere(userId: number): Promise<number> {
    return this.store.deleteUserSessions(userId);
  }

  /**
   * Ends every other session of the session's user (a new password: browsers that knew the
   * old one sign in again) and keeps this one; answers how many ended.
   */
  async endOtherSessions(current: SessionRecord): Promise<number> {
    const ended = await this.store.deleteUserSessions(current.userId);
    await this.store.insertSession(current);
    return Math.max(0, ended - 1);
  }

  /**
   * The teams the user belongs to, with their role in each, by team id (a team switcher's
   * choices).
   *
   * @example
   * ```ts
   * await auth.teamsOf(user.id); // [{ team: { id: 1, name: "Acme", … }, role: "owner" }, …]
   * ```
   */
  async teamsOf(userId: number): Promise<{ team: TeamRecord; role: Role }[]> {
    const memberships = await this.catalog.listUserMemberships(userId);
    const teams = await Promise.all(memberships.map(({ teamId }) => this.catalog.getTeam(teamId)));
    return memberships.flatMap(({ role }, index) => {
      const team = teams[index];
      return team ? [{ team, role }] : [];
    });
  }

  /**
   * Moves a signed-in person to another of their teams: a new session there, which keeps
   * the old one's absolute expiry (switching never lengthens a sign-in), and the old session
   * ends. null, and nothing changes, when they are no member of that team.
   *
   * @example
   * ```ts
   * const started = await auth.switchTeam(signedIn.session, otherTeamId);
   * if (started) setCookie(started.sessionId);
   * ```
   */
  async switchTeam(current: SessionRecord, teamId: number): Promise<StartedSession | null> {
    const started = await this.startSession(current.userId, teamId, current.expiresAt);
    if (started) await this.store.deleteSession(current.idHash);
    return started;
  }

  /** Ends the user's sessions in one team (removed from it, or lowered to member). */
  endSessionsIn(teamId: number, userId: number): Promise<number> {
    return this.store.deleteUserSessions(userId, teamId);
  }

  /**
   * Revokes the applications the user connected in one team (removed from it): they must not
   * come back if the user rejoins. Returns how many were revoked.
   */
  async endConnectedAppsIn(teamId: number, userId: number): Promise<number> {
    return (await this.connectedApps?.revokeAllOf(teamId, userId, this.clock.now())) ?? 0;
  }

  private async startSession(
    userId: number,
    teamId: number,
    expiresAt?: number,
  ): Promise<StartedSession | null> {
    const member = await this.memberOf(userId, teamId);
    if (!member) return null;
    const sessionId = newSecret(SESSION_ID_PREFIX);
    const now = this.clock.now();
    const session: SessionRecord = {
      idHash: hashSecret(sessionId),
      userId,
      teamId,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: expiresAt ?? now + this.policy.absoluteMs,
    };
    await this.store.insertSession(session);
    return { sessionId, session, ...member };
  }

  private async memberOf(userId: number, teamId: number) {
    const [user, team, membership] = await Promise.all([
      this.catalog.getUser(userId),
      this.catalog.getTeam(teamId),
      this.catalog.getMembership(teamId, userId),
    ]);
    return user && team && membership ? { user, team, role: membership.role } : null;
  }

  /**
   * At most once a minute, from the two doors anyone may knock on (a failed sign-in with any
   * email leaves a row): what can no longer be used goes, so the store stays bounded by what
   * one window can hold. A failure here is left for the next minute, not the sign-in's.
   */
  private async deleteExpiredNowAndThen(): Promise<void> {
    const now = this.clock.now();
    if (now - this.lastDeletedExpiredAt < DELETE_EXPIRED_INTERVAL_MS) return;
    this.lastDeletedExpiredAt = now;
    const limits = { idleMs: this.policy.idleMs, failureWindowMs: this.policy.windowMs };
    await this.store.deleteExpired(now, limits).catch(() => undefined);
  }

  /** The team a password sign-in lands in: the user's first (by id). */
  private async firstTeamOf(userId: number): Promise<TeamRecord | undefined> {
    return (await this.teamsOf(userId))[0]?.team;
  }
}
