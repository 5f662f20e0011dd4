/**
 * How long sessions and links live and how many failed sign-ins are allowed.
 *
 * @example
 * ```ts
 * new AuthService({ ...deps, policy: { ...DEFAULT_AUTH_POLICY, idleMs: 30 * 60_000 } });
 * ```
 */
export interface AuthPolicy {
  /** A session unused this long ends. */
  idleMs: number;
  /** A session ends this long after sign-in, however active. */
  absoluteMs: number;
  /** A one-time sign-in link works this long (and once). */
  linkTtlMs: number;
  /** Failed sign-ins counted per window. */
  windowMs: number;
  /** Failures per account (email) per window before sign-in is refused for it. */
  accountLimit: number;
  /** Failures per client address per window (many accounts tried from one place). */
  addressLimit: number;
}

/**
 * Sessions end after 12 h unused or 7 days; links live 15 min; 5 failures per account and 20
 * per address in 15 min.
 *
 * @example
 * ```ts
 * new AuthService({ store, catalog, clock, policy: { ...DEFAULT_AUTH_POLICY, idleMs: 3_600_000 } });
 * ```
 */
export const DEFAULT_AUTH_POLICY: AuthPolicy = {
  idleMs: 12 * 3_600_000,
  absoluteMs: 7 * 86_400_000,
  linkTtlMs: 15 * 60_000,
  windowMs: 15 * 60_000,
  accountLimit: 5,
  addressLimit: 20,
};

/** lastSeenAt is written at most this often: reading a page must not always be a write. */
export const SESSION_TOUCH_INTERVAL_MS = 60_000;
