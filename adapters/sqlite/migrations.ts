import type Database from "better-sqlite3";
import { OAUTH_SCHEMA } from "./oauth-schema.js";

/**
 * One schema step. `version` is what `PRAGMA user_version` holds once it is applied.
 *
 * How to add a migration: append an entry with the next version number (versions are
 * 1, 2, 3, … with no gaps) and never edit or reorder an entry that has shipped: databases in
 * the field have already run it. Each migration runs in its own IMMEDIATE transaction that
 * also sets `user_version`, so a failure leaves the previous version intact and two processes
 * starting at once cannot both apply it. `up` is SQL (several statements allowed) or, for
 * data moves, a function given the open database inside that transaction.
 */
export interface Migration {
  version: number;
  name: string;
  up: string | ((db: Database.Database) => void);
}

/** Booleans are INTEGER 0/1 with CHECKs; lists, maps and encrypted secrets are JSON TEXT. */
const CATALOG_SCHEMA = `
CREATE TABLE teams (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  slug TEXT NOT NULL UNIQUE
);

CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE
);

CREATE TABLE memberships (
  team_id INTEGER NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  PRIMARY KEY (team_id, user_id)
) WITHOUT ROWID;

CREATE TABLE api_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  abilities TEXT NOT NULL CHECK (json_valid(abilities)),
  token_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER,
  last_used_at INTEGER
);
CREATE UNIQUE INDEX api_tokens_by_hash ON api_tokens (token_hash);
CREATE INDEX api_tokens_by_team ON api_tokens (team_id);

CREATE TABLE budgets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  origin_max_concurrent INTEGER,
  UNIQUE (team_id, name)
);

CREATE TABLE pools (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT,
  subdomain TEXT NOT NULL,
  backend TEXT NOT NULL CHECK (backend IN ('http', 'postgres')),
  origin TEXT NOT NULL,
  max_concurrent INTEGER NOT NULL,
  queue_size INTEGER NOT NULL,
  queue_timeout_ms INTEGER NOT NULL,
  rpm INTEGER,
  request_timeout_ms INTEGER NOT NULL,
  term_ms INTEGER NOT NULL,
  renew_interval_ms INTEGER NOT NULL,
  adaptive INTEGER NOT NULL CHECK (adaptive IN (0, 1)),
  require_key INTEGER NOT NULL CHECK (require_key IN (0, 1)),
  allow_authorization_header INTEGER NOT NULL CHECK (allow_authorization_header IN (0, 1)),
  credential_header TEXT,
  credential_value TEXT CHECK (credential_value IS NULL OR json_valid(credential_value)),
  origin_signing INTEGER NOT NULL CHECK (origin_signing IN (0, 1)),
  read_methods TEXT NOT NULL CHECK (json_valid(read_methods)),
  read_paths TEXT CHECK (read_paths IS NULL OR json_valid(read_paths)),
  budget_id INTEGER REFERENCES budgets (id) ON DELETE SET NULL,
  reserved_concurrent INTEGER NOT NULL,
  metrics_retention_days INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX pools_by_subdomain ON pools (subdomain);
CREATE INDEX pools_by_team ON pools (team_id);
CREATE INDEX pools_by_budget ON pools (budget_id);

CREATE TABLE pool_keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  pool_id INTEGER NOT NULL REFERENCES pools (id) ON DELETE CASCADE,
  label TEXT NOT NULL,
  last_four TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  access TEXT NOT NULL CHECK (access IN ('read', 'write')),
  expires_at INTEGER,
  revoked_at INTEGER,
  created_at INTEGER NOT NULL,
  signing_secret TEXT CHECK (signing_secret IS NULL OR json_valid(signing_secret))
);
CREATE UNIQUE INDEX pool_keys_by_hash ON pool_keys (key_hash);
CREATE INDEX pool_keys_by_pool ON pool_keys (pool_id);
`;

/** One row per pool and bucket start; a saved bucket replaces the row (counts are totals). */
const METRICS_SCHEMA = `
CREATE TABLE metrics_buckets (
  pool TEXT NOT NULL,
  start INTEGER NOT NULL,
  requests INTEGER NOT NULL,
  admitted INTEGER NOT NULL,
  queued INTEGER NOT NULL,
  rejected INTEGER NOT NULL,
  timed_out INTEGER NOT NULL,
  throttled INTEGER NOT NULL,
  released INTEGER NOT NULL,
  queue_wait_ms INTEGER NOT NULL,
  hold_ms INTEGER NOT NULL,
  PRIMARY KEY (pool, start)
) WITHOUT ROWID;
CREATE INDEX metrics_buckets_by_start ON metrics_buckets (start);
`;

/**
 * One row per acquire attempt (Lock API and proxy); `pool` is the subdomain, like
 * metrics_buckets. Read newest first per pool and pruned per pool, hence the index.
 */
const ACCESS_LOG_SCHEMA = `
CREATE TABLE access_log (
  id INTEGER PRIMARY KEY,
  pool TEXT NOT NULL,
  at INTEGER NOT NULL,
  key_id INTEGER,
  outcome TEXT NOT NULL CHECK (outcome IN ('admitted', 'queued', 'rejected', 'timed_out', 'aborted')),
  reason TEXT,
  queued_ms INTEGER NOT NULL,
  remote_address TEXT,
  source TEXT NOT NULL CHECK (source IN ('lock', 'proxy'))
);
CREATE INDEX access_log_by_pool_time ON access_log (pool, at);
`;

/**
 * The access log's outcome `unavailable` (a 503: the server stopping, or Redis away). SQLite
 * cannot change a CHECK constraint in place, so the table is rebuilt with its rows.
 */
const ACCESS_LOG_UNAVAILABLE = `
CREATE TABLE access_log_next (
  id INTEGER PRIMARY KEY,
  pool TEXT NOT NULL,
  at INTEGER NOT NULL,
  key_id INTEGER,
  outcome TEXT NOT NULL
    CHECK (outcome IN ('admitted', 'queued', 'rejected', 'timed_out', 'aborted', 'unavailable')),
  reason TEXT,
  queued_ms INTEGER NOT NULL,
  remote_address TEXT,
  source TEXT NOT NULL CHECK (source IN ('lock', 'proxy'))
);
INSERT INTO access_log_next (id, pool, at, key_id, outcome, reason, queued_ms, remote_address, source)
  SELECT id, pool, at, key_id, outcome, reason, queued_ms, remote_address, source FROM access_log;
DROP TABLE access_log;
ALTER TABLE access_log_next RENAME TO access_log;
CREATE INDEX access_log_by_pool_time ON access_log (pool, at);
`;

/**
 * Database-backend pools: their read role's connection (encrypted) and query limits, as one
 * JSON value (`PoolDatabaseRecord`); NULL for HTTP pools.
 */
const POOL_DATABASE = `
ALTER TABLE pools ADD COLUMN database_connection TEXT
  CHECK (database_connection IS NULL OR json_valid(database_connection));
`;

/**
 * Dashboard sign-in (issue 21): password hashes, sessions and one-time links (stored by the
 * SHA-256 of their secret, never the secret), and failed sign-ins per fixed window.
 */
const SIGN_IN_SCHEMA = `
CREATE TABLE user_passwords (
  user_id INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  hash TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE sessions (
  id_hash TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  team_id INTEGER NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_by_user ON sessions (user_id, team_id);
CREATE TABLE sign_in_links (
  token_hash TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  team_id INTEGER NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE sign_in_failures (
  key TEXT PRIMARY KEY,
  window_start INTEGER NOT NULL,
  count INTEGER NOT NULL
) WITHOUT ROWID;
`;

/**
 * First-run setup links (issue 21): while the catalog has no team, `sluice serve` prints one;
 * stored by the SHA-256 of its token, never the token.
 */
const SETUP_TOKENS_SCHEMA = `
CREATE TABLE setup_tokens (
  token_hash TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
`;

/**
 * Caller policies of a pool (`PoolRecord.callerPolicies`, JSON; NULL for none), a key's
 * request-signing secret for the `hmac` policy (encrypted, like `signing_secret`), and the
 * access log's outcome `refused` (a caller policy turned the attempt away; its reason names
 * the policy). SQLite cannot change a CHECK constraint in place, so the log is rebuilt.
 */
const CALLER_POLICIES = `
ALTER TABLE pools ADD COLUMN caller_policies TEXT
  CHECK (caller_policies IS NULL OR json_valid(caller_policies));
ALTER TABLE pool_keys ADD COLUMN request_secret TEXT
  CHECK (request_secret IS NULL OR json_valid(request_secret));
CREATE TABLE access_log_next (
  id INTEGER PRIMARY KEY,
  pool TEXT NOT NULL,
  at INTEGER NOT NULL,
  key_id INTEGER,
  outcome TEXT NOT NULL
    CHECK (outcome IN ('admitted', 'queued', 'rejected', 'timed_out', 'aborted', 'unavailable', 'refused')),
  reason TEXT,
  queued_ms INTEGER NOT NULL,
  remote_address TEXT,
  source TEXT NOT NULL CHECK (source IN ('lock', 'proxy'))
);
INSERT INTO access_log_next (id, pool, at, key_id, outcome, reason, queued_ms, remote_address, source)
  SELECT id, pool, at, key_id, outcome, reason, queued_ms, remote_address, source FROM access_log;
DROP TABLE access_log;
ALTER TABLE access_log_next RENAME TO access_log;
CREATE INDEX access_log_by_pool_time ON access_log (pool, at);
`;

/**
 * The upstream's status of a proxied call (`AccessLogEntry.upstreamStatus`). A nullable column
 * added in place: no table rebuild, and older rows read as "no answer recorded".
 */
const ACCESS_LOG_UPSTREAM_STATUS = `
ALTER TABLE access_log ADD COLUMN upstream_status INTEGER
  CHECK (upstream_status IS NULL OR upstream_status BETWEEN 100 AND 599);
`;

/**
 * The schema history, oldest first. Applied by `openSluiceDatabase` (or `migrate(db, MIGRATIONS)`). Next free slot: version 11.
 */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "catalog", up: CATALOG_SCHEMA },
  { version: 2, name: "metrics buckets", up: METRICS_SCHEMA },
  { version: 3, name: "access log", up: ACCESS_LOG_SCHEMA },
  { version: 4, name: "access log outcome unavailable", up: ACCESS_LOG_UNAVAILABLE },
  { version: 5, name: "pool database connection", up: POOL_DATABASE },
  { version: 6, name: "oauth grants and tokens", up: OAUTH_SCHEMA },
  { version: 7, name: "dashboard sign-in", up: SIGN_IN_SCHEMA },
  { version: 8, name: "dashboard setup links", up: SETUP_TOKENS_SCHEMA },
  { version: 9, name: "caller policies", up: CALLER_POLICIES },
  { version: 10, name: "access log upstream status", up: ACCESS_LOG_UPSTREAM_STATUS },
];

/** The version a fully migrated database has. */
export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
