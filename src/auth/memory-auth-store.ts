import type {
  AuthStore,
  ExpiryLimits,
  FailureWindow,
  SessionRecord,
  SetupTokenRecord,
  SignInLinkRecord,
} from "./types.js";

/**
 * The reference {@link AuthStore}: maps in memory, records copied in and out. For tests and
 * servers that keep nothing across restarts.
 *
 * @example
 * ```ts
 * const auth = new AuthService({ store: new MemoryAuthStore(), catalog: catalogStore, clock });
 * ```
 */
export class MemoryAuthStore implements AuthStore {
  private readonly passwords = new Map<number, string>();
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly links = new Map<string, SignInLinkRecord>();
  private readonly failureWindows = new Map<string, { windowStart: number; count: number }>();
  private readonly setupTokens = new Map<string, SetupTokenRecord>();

  async getPasswordHash(userId: number): Promise<string | undefined> {
    return this.passwords.get(userId);
  }

  async setPasswordHash(userId: number, hash: string): Promise<void> {
    this.passwords.set(userId, hash);
  }

  async insertSession(session: SessionRecord): Promise<void> {
    this.sessions.set(session.idHash, { ...session });
  }

  async findSession(idHash: string): Promise<SessionRecord | undefined> {
    const session = this.sessions.get(idHash);
    return session && { ...session };
  }

  async touchSession(idHash: string, at: number): Promise<void> {
    const session = this.sessions.get(idHash);
    if (session) session.lastSeenAt = at;
  }

  async deleteSession(idHash: string): Promise<boolean> {
    return this.sessions.delete(idHash);
  }

  async deleteUserSessions(userId: number, teamId?: number): Promise<number> {
    let deleted = 0;
    for (const [idHash, session] of this.sessions) {
      if (session.userId !== userId || (teamId !== undefined && session.teamId !== teamId)) {
        continue;
      }
      this.sessions.delete(idHash);
      deleted += 1;
    }
    return deleted;
  }

  async insertSignInLink(link: SignInLinkRecord): Promise<void> {
    this.links.set(link.tokenHash, { ...link });
  }

  async consumeSignInLink(tokenHash: string, at: number): Promise<SignInLinkRecord | undefined> {
    const link = this.links.get(tokenHash);
    if (!link) return undefined;
    this.links.delete(tokenHash);
    return at < link.expiresAt ? link : undefined;
  }

  async recordFailure(key: string, at: number, windowMs: number): Promise<number> {
    const current = this.failureWindows.get(key);
    const next =
      current && at < current.windowStart + windowMs
        ? { windowStart: current.windowStart, count: current.count + 1 }
        : { windowStart: at, count: 1 };
    this.failureWindows.set(key, next);
    return next.count;
  }

  async failures(key: string, at: number, windowMs: number): Promise<FailureWindow> {
    const current = this.failureWindows.get(key);
    return current && at < current.windowStart + windowMs
      ? { count: current.count, endsAt: current.windowStart + windowMs }
      : { count: 0, endsAt: at };
  }

  async clearFailures(key: string): Promise<void> {
    this.failureWindows.delete(key);
  }

  async insertSetupToken(token: SetupTokenRecord): Promise<void> {
    this.setupTokens.set(token.tokenHash, { ...token });
  }

  async findSetupToken(tokenHash: string, at: number): Promise<SetupTokenRecord | undefined> {
    const token = this.setupTokens.get(tokenHash);
    return token && at < token.expiresAt ? { ...token } : undefined;
  }

  async consumeSetupToken(tokenHash: string, at: number): Promise<SetupTokenRecord | undefined> {
    const token = this.setupTokens.get(tokenHash);
    this.setupTokens.delete(tokenHash);
    if (!token || at >= token.expiresAt) return undefined;
    this.setupTokens.clear();
    return token;
  }

  async deleteSetupTokens(): Promise<void> {
    this.setupTokens.clear();
  }

  async deleteExpired(at: number, limits: ExpiryLimits): Promise<number> {
    let deleted = 0;
    const drop = <V>(map: Map<string, V>, expired: (value: V) => boolean) => {
      for (const [key, value] of map) {
        if (expired(value)) deleted += Number(map.delete(key));
      }
    };
    drop(this.sessions, (s) => at >= s.expiresAt || at >= s.lastSeenAt + limits.idleMs);
    drop(this.links, (link) => at >= link.expiresAt);
    drop(this.setupTokens, (token) => at >= token.expiresAt);
    drop(this.failureWindows, (w) => at >= w.windowStart + limits.failureWindowMs);
    return deleted;
  }
}
