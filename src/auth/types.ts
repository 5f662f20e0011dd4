/**
 * Dashboard sign-in records. Like API tokens, session ids and sign-in link tokens are never
 * stored in clear: only their SHA-256 hashes (`hashSecret`). Passwords are stored as scrypt
 * hashes (`passwords.ts`), which carry their own salt and cost.
 */

/** A signed-in browser: one user acting within one team. */
export interface SessionRecord {
  /** Hex SHA-256 of the session id the cookie carries. */
  idHash: string;
  userId: number;
  teamId: number;
  createdAt: number;
  /** Last request seen (written at most once a minute); idle expiry counts from it. */
  lastSeenAt: number;
  /** Absolute expiry: the session ends then however active it is. */
  expiresAt: number;
}

/** A one-time sign-in link (printed by `sluice serve` for a team without passwords). */
export interface SignInLinkRecord {
  /** Hex SHA-256 of the link's token. */
  tokenHash: string;
  userId: number;
  teamId: number;
  createdAt: number;
  expiresAt: number;
}

/**
 * A first-run setup link (printed by `sluice serve` while the catalog has no team): whoever
 * holds it may create the first team and become its owner.
 */
export interface SetupTokenRecord {
  /** Hex SHA-256 of the link's token. */
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
}

/** Failed sign-ins under one key in the window running now. */
export interface FailureWindow {
  count: number;
  /** When the window ends (the count then starts again from 0); `at` itself when count is 0. */
  endsAt: number;
}

/**
 * Persistence of sign-in state. Every method returns a Promise, so a store over a network
 * database fits the same interface. Three implementations pass one contract suite
 * (`test/auth/auth-store-contract.ts`): memory (`memory-auth-store.ts`), SQLite
 * (`adapters/sqlite/sqlite-auth-store.ts`) and PostgreSQL
 * (`adapters/postgres/postgres-auth-store.ts`, shared by a fleet).
 */
export interface AuthStore {
  /** The user's password hash, or undefined when they have none. */
  getPasswordHash(userId: number): Promise<string | undefined>;
  setPasswordHash(userId: number, hash: string, at: number): Promise<void>;

  insertSession(session: SessionRecord): Promise<void>;
  findSession(idHash: string): Promise<SessionRecord | undefined>;
  touchSession(idHash: string, at: number): Promise<void>;
  /** Deletes one session; false when there was none. */
  deleteSession(idHash: string): Promise<boolean>;
  /** Deletes the user's sessions (only those in `teamId` when given); answers how many went. */
  deleteUserSessions(userId: number, teamId?: number): Promise<number>;

  insertSignInLink(link: SignInLinkRecord): Promise<void>;
  /**
   * Takes the link out of the store and answers it, if it exists and has not expired at `at`:
   * a link works once, even when two requests race for it.
   */
  consumeSignInLink(tokenHash: string, at: number): Promise<SignInLinkRecord | undefined>;

  /**
   * Counts a failed sign-in under `key` in a fixed window of `windowMs` (a new window starts
   * when the last one is over) and answers the count in the current window.
   */
  recordFailure(key: string, at: number, windowMs: number): Promise<number>;
  /** Failures under `key` in the window running at `at` (count 0 when it is over). */
  failures(key: string, at: number, windowMs: number): Promise<FailureWindow>;
  clearFailures(key: string): Promise<void>;

  insertSetupToken(token: SetupTokenRecord): Promise<void>;
  /** The setup token if it exists and has not expired at `at` (it stays in the store). */
  findSetupToken(tokenHash: string, at: number): Promise<SetupTokenRecord | undefined>;
  /**
   * Takes the token out and answers it while unexpired at `at`, and then takes every other
   * setup token out too, atomically: of two setups racing, even with different tokens, only
   * one gets a token (the first team is made once).
   */
  consumeSetupToken(tokenHash: string, at: number): Promise<SetupTokenRecord | undefined>;
  /** Deletes every setup token (once a team exists none may work). */
  deleteSetupTokens(): Promise<void>;

  /**
   * Deletes what can no longer be used at `at`: sessions past their absolute expiry or idle
   * for `idleMs`, expired sign-in links and setup tokens, and failure counts whose window of
   * `failureWindowMs` is over. Answers how many rows went. Without it every failed sign-in
   * (with any email) would leave a row behind for good.
   */
  deleteExpired(at: number, limits: ExpiryLimits): Promise<number>;
}

/** How long unused sessions and failure counts live (from {@link AuthPolicy}). */
export interface ExpiryLimits {
  idleMs: number;
  failureWindowMs: number;
}
