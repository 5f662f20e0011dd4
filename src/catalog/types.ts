/**
 * The catalog: who may do what (teams, users, API tokens) and what is governed (budgets,
 * pools, pool keys). Records here are the storage shapes; the Control API maps them to the
 * contract's resources (snake_case) in `adapters/hono/control/`.
 *
 * Secrets: plaintext API tokens and pool keys are never stored, only their SHA-256 hashes.
 * Secrets the server must use later (upstream credentials, signing secrets) are stored
 * encrypted (`EncryptedSecret`, AES-256-GCM) and decrypted only by the code that uses them.
 */

import type { CallerPolicies } from "../policies/policy-schema.js";

/** Abilities an API token may carry (contract section 5). */
export const ABILITIES = [
  "budgets:read",
  "pools:read",
  "pools:write",
  "keys:write",
  "metrics:read",
] as const;
export type Ability = (typeof ABILITIES)[number];

/** Token lifetimes offered at creation (contract section 8). */
export const TOKEN_LIFETIMES = ["1m", "6m", "1y"] as const;
export type TokenLifetime = (typeof TOKEN_LIFETIMES)[number];

export type Role = "owner" | "admin" | "member";

/** Key expiry presets (contract section 8). */
export const KEY_EXPIRY_PRESETS = ["none", "1h", "24h", "7d"] as const;
export type KeyExpiryPreset = (typeof KEY_EXPIRY_PRESETS)[number];

export type KeyAccess = "read" | "write";
export type PoolBackend = "http" | "postgres";

/** AES-256-GCM ciphertext, all parts base64. */
export interface EncryptedSecret {
  iv: string;
  tag: string;
  data: string;
}

export interface TeamRecord {
  id: number;
  name: string;
  slug: string;
}

export interface UserRecord {
  id: number;
  name: string;
  email: string;
}

export interface MembershipRecord {
  teamId: number;
  userId: number;
  role: Role;
}

export interface ApiTokenRecord {
  id: number;
  teamId: number;
  /** The creator: the token acts as this user within `teamId` only. */
  userId: number;
  name: string;
  abilities: Ability[];
  /** Hex SHA-256 of the plaintext token. */
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

export interface BudgetRecord {
  id: number;
  teamId: number;
  name: string;
  /** Shared ceiling over member pools; null = none. */
  originMaxConcurrent: number | null;
}

/** How the managed upstream credential is sent to the origin. */
export interface CredentialRecord {
  /** Header name, e.g. "authorization" or "x-api-key". */
  header: string;
  /** Encrypted header value. */
  value: EncryptedSecret;
}

/**
 * A database-backend pool's read role and query limits (`backend: "postgres"`). The
 * connection string is a secret (it holds the role's password): stored encrypted, never shown.
 */
export interface PoolDatabaseRecord {
  /** Encrypted `postgres://user:password@host:port/database` of the pool's read role. */
  connectionString: EncryptedSecret;
  /** Most rows one request may return (all statements of a batch together). */
  maxRows: number;
  /** Most bytes of values one request may return (their text, all statements together). */
  maxResultBytes: number;
  /** Longest a statement may run; the pool's request timeout caps it further. */
  statementTimeoutMs: number;
}

export interface PoolRecord {
  id: number;
  teamId: number;
  name: string;
  description: string | null;
  /** Globally unique DNS label: the pool's host is `{subdomain}.{poolDomain}`; also the pool's path segment. */
  subdomain: string;
  backend: PoolBackend;
  /** Upstream base URL, e.g. "https://api.openai.com". */
  origin: string;
  maxConcurrent: number;
  queueSize: number;
  queueTimeoutMs: number;
  rpm: number | null;
  requestTimeoutMs: number;
  termMs: number;
  renewIntervalMs: number;
  adaptive: boolean;
  /** When false, callers without a key are admitted (the pool is open). */
  requireKey: boolean;
  /** Whether `Authorization: Bearer|Service <key>` is accepted besides `X-Svc-Key`. */
  allowAuthorizationHeader: boolean;
  credential: CredentialRecord | null;
  /** The read role and limits of a `postgres` pool; null for an `http` pool. */
  database: PoolDatabaseRecord | null;
  /** Origin signing: each proxied request is signed with the key's signing secret. */
  originSigning: boolean;
  /** Extra methods the pool treats as reads (upper case), beyond GET, HEAD, OPTIONS. */
  readMethods: string[];
  /** Optional path-prefix scoping of the extra read methods, keyed by method; null = unscoped. */
  readPaths: Record<string, string[]> | null;
  /** Caller policies checked on top of the key rule before a slot is taken; null = none. */
  callerPolicies: CallerPolicies | null;
  budgetId: number | null;
  reservedConcurrent: number;
  metricsRetentionDays: number;
  createdAt: number;
  updatedAt: number;
}

export interface PoolKeyRecord {
  id: number;
  poolId: number;
  label: string;
  lastFour: string;
  /** Hex SHA-256 of the plaintext key. */
  keyHash: string;
  access: KeyAccess;
  expiresAt: number | null;
  revokedAt: number | null;
  createdAt: number;
  /** Present when the pool had origin signing on at creation. */
  signingSecret: EncryptedSecret | null;
  /** The caller's request-signing secret: present when the pool had the `hmac` caller policy at creation. */
  requestSecret: EncryptedSecret | null;
}

/** Fields accepted when creating or updating a pool (id, team and timestamps come from the store). */
export type PoolInput = Omit<PoolRecord, "id" | "teamId" | "createdAt" | "updatedAt">;

/**
 * Persistence of the catalog. Two implementations pass one contract suite
 * (`test/catalog/catalog-store-contract.ts`): memory (`src/catalog/memory-catalog-store.ts`)
 * SQLite (`adapters/sqlite/`) and PostgreSQL (`sluice/postgres`). Every method returns a
 * Promise, so a store may sit across a network; the memory and SQLite stores answer at once.
 * Every lookup that takes a `teamId` returns nothing for another team's rows.
 */
export interface CatalogStore {
  createTeam(input: { name: string; slug: string }): Promise<TeamRecord>;
  findTeamBySlug(slug: string): Promise<TeamRecord | undefined>;
  getTeam(teamId: number): Promise<TeamRecord | undefined>;
  /** Every team, by id (operator tools; API callers only ever see their own). */
  listTeams(): Promise<TeamRecord[]>;

  createUser(input: { name: string; email: string }): Promise<UserRecord>;
  findUserByEmail(email: string): Promise<UserRecord | undefined>;
  getUser(userId: number): Promise<UserRecord | undefined>;
  setMembership(membership: MembershipRecord): Promise<void>;
  getMembership(teamId: number, userId: number): Promise<MembershipRecord | undefined>;
  /** The team's memberships, by user id. */
  listMemberships(teamId: number): Promise<MembershipRecord[]>;
  /** The user's memberships, by team id (the teams they may sign in to). */
  listUserMemberships(userId: number): Promise<MembershipRecord[]>;
  /** Ends a membership; false when the user was not in the team. */
  removeMembership(teamId: number, userId: number): Promise<boolean>;

  insertApiToken(input: Omit<ApiTokenRecord, "id">): Promise<ApiTokenRecord>;
  findApiTokenByHash(tokenHash: string): Promise<ApiTokenRecord | undefined>;
  listApiTokens(teamId: number): Promise<ApiTokenRecord[]>;
  revokeApiToken(teamId: number, tokenId: number, at: number): Promise<ApiTokenRecord | undefined>;
  touchApiToken(tokenId: number, at: number): Promise<void>;

  upsertBudget(
    teamId: number,
    input: { name: string; originMaxConcurrent: number | null },
  ): Promise<BudgetRecord>;
  getBudget(teamId: number, budgetId: number): Promise<BudgetRecord | undefined>;
  listBudgets(teamId: number): Promise<BudgetRecord[]>;
  /**
   * Renames one of the team's budgets, keeping its id (API and MCP callers hold it) and its
   * pools: undefined when the team has no such budget, a ConflictError when another of the
   * team's budgets has the name.
   */
  renameBudget(teamId: number, budgetId: number, name: string): Promise<BudgetRecord | undefined>;
  /**
   * Deletes one of the team's budgets: false when the team has no such budget, a
   * ConflictError while a pool is still in it (move or delete its pools first).
   */
  deleteBudget(teamId: number, budgetId: number): Promise<boolean>;

  /** Creates or updates (matched by subdomain within the team) a pool. A subdomain taken by another team is a ConflictError. */
  upsertPool(teamId: number, input: PoolInput): Promise<PoolRecord>;
  getPoolBySubdomain(teamId: number, subdomain: string): Promise<PoolRecord | undefined>;
  /** For the proxy and Lock API, which know only the host or path: any team. */
  findPoolBySubdomain(subdomain: string): Promise<PoolRecord | undefined>;
  listPools(teamId: number): Promise<PoolRecord[]>;
  /** Every pool of every team: for syncing the governor at start-up. */
  listAllPools(): Promise<PoolRecord[]>;
  listAllBudgets(): Promise<BudgetRecord[]>;
  deletePool(teamId: number, poolId: number): Promise<boolean>;

  insertPoolKey(input: Omit<PoolKeyRecord, "id">): Promise<PoolKeyRecord>;
  getPoolKey(poolId: number, keyId: number): Promise<PoolKeyRecord | undefined>;
  findPoolKeyByHash(keyHash: string): Promise<PoolKeyRecord | undefined>;
  listPoolKeys(poolId: number): Promise<PoolKeyRecord[]>;
  revokePoolKey(poolId: number, keyId: number, at: number): Promise<PoolKeyRecord | undefined>;

  /**
   * Runs `body` as one unit on the store handle it is given (`tx`; use only it inside):
   * another process sees all of its writes or none, and none of them when it throws
   * (SQLite: one immediate transaction; PostgreSQL: BEGIN/COMMIT on one connection). Calls on
   * the store itself (not on `tx`) made meanwhile wait until the unit ends, so they never
   * land inside it. The memory store, which no other process shares, runs units one at a time.
   */
  atomically<T>(body: (tx: CatalogStore) => Promise<T>): Promise<T>;
  /**
   * A counter that changes whenever any process changes the catalog (SQLite `data_version`-like,
   * PostgreSQL a version row), for cheap change detection.
   */
  changeMarker(): Promise<number>;
  close(): Promise<void>;
}
