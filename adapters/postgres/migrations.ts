import type pg from "pg";

/** One numbered schema step; `sql` runs in one transaction with its `schema_migrations` row. */
export interface PostgresMigration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The catalog, metrics and access log as the SQLite store keeps them (same columns: INTEGER
 * 0/1 booleans, JSON TEXT for lists and sealed secrets), with BIGINT epoch-ms times.
 * `catalog_version` is the change marker: a statement-level trigger on every catalog table
 * bumps it and NOTIFYs `sluice_catalog` at commit. A token's last use is no catalog change.
 */
const CATALOG_SCHEMA = `
CREATE TABLE teams (
  id BIGSERIAL PRIMARY KEY,
  name TEXT NOT NULL,
  slug TEXT NOT NULL UNIQUE
);
CREATE TABLE users (
  id BIGSERIAL PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE
);
CREATE TABLE memberships (
  team_id BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  PRIMARY KEY (team_id, user_id)
);
CREATE TABLE api_tokens (
  id BIGSERIAL PRIMARY KEY,
  team_id BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  abilities TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT,
  last_used_at BIGINT
);
CREATE INDEX api_tokens_by_team ON api_tokens (team_id);
CREATE TABLE budgets (
  id BIGSERIAL PRIMARY KEY,
  team_id BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  origin_max_concurrent INTEGER,
  UNIQUE (team_id, name)
);
CREATE TABLE pools (
  id BIGSERIAL PRIMARY KEY,
  team_id BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT,
  subdomain TEXT NOT NULL UNIQUE,
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
  credential_value TEXT,
  origin_signing INTEGER NOT NULL CHECK (origin_signing IN (0, 1)),
  read_methods TEXT NOT NULL,
  read_paths TEXT,
  budget_id BIGINT REFERENCES budgets (id) ON DELETE SET NULL,
  reserved_concurrent INTEGER NOT NULL,
  metrics_retention_days INTEGER NOT NULL,
  database_connection TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX pools_by_team ON pools (team_id);
CREATE INDEX pools_by_budget ON pools (budget_id);
CREATE TABLE pool_keys (
  id BIGSERIAL PRIMARY KEY,
  pool_id BIGINT NOT NULL REFERENCES pools (id) ON DELETE CASCADE,
  label TEXT NOT NULL,
  last_four TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  access TEXT NOT NULL CHECK (access IN ('read', 'write')),
  expires_at BIGINT,
  revoked_at BIGINT,
  created_at BIGINT NOT NULL,
  signing_secret TEXT
);
CREATE INDEX pool_keys_by_pool ON pool_keys (pool_id);

CREATE TABLE catalog_version (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version BIGINT NOT NULL
);
INSERT INTO catalog_version (id, version) VALUES (1, 0);
CREATE FUNCTION sluice_catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  next_version BIGINT;
BEGIN
  UPDATE catalog_version SET version = version + 1 WHERE id = 1 RETURNING version INTO next_version;
  PERFORM pg_notify('sluice_catalog', next_version::text);
  RETURN NULL;
END
$$;
CREATE TRIGGER teams_changed AFTER INSERT OR UPDATE OR DELETE ON teams
  FOR EACH STATEMENT EXECUTE FUNCTION sluice_catalog_changed();
CREATE TRIGGER users_changed AFTER INSERT OR UPDATE OR DELETE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION sluice_catalog_changed();
CREATE TRIGGER memberships_changed AFTER INSERT OR UPDATE OR DELETE ON memberships
  FOR EACH STATEMENT EXECUTE FUNCTION sluice_catalog_changed();
CREATE TRIGGER api_tokens_changed
  AFTER INSERT OR DELETE OR UPDATE OF team_id, user_id, name, abilities, token_hash, expires_at, revoked_at
  ON api_tokens FOR EACH STATEMENT EXECUTE FUNCTION sluice_catalog_changed();
CREATE TRIGGER budgets_changed AFTER INSERT OR UPDATE OR DELETE ON budgets
  FOR EACH STATEMENT EXECUTE FUNCTION sluice_catalog_changed();
CREATE TRIGGER pools_changed AFTER INSERT OR UPDATE OR DELETE ON pools
  FOR EACH STATEMENT EXECUTE FUNCTION sluice_catalog_changed();
CREATE TRIGGER pool_keys_changed AFTER INSERT OR UPDATE OR DELETE ON pool_keys
  FOR EACH STATEMENT EXECUTE FUNCTION sluice_catalog_changed();
`;

const METRICS_AND_ACCESS_LOG_SCHEMA = `
CREATE TABLE metrics_buckets (
  pool TEXT NOT NULL,
  start BIGINT NOT NULL,
  requests BIGINT NOT NULL,
  admitted BIGINT NOT NULL,
  queued BIGINT NOT NULL,
  rejected BIGINT NOT NULL,
  timed_out BIGINT NOT NULL,
  throttled BIGINT NOT NULL,
  released BIGINT NOT NULL,
  queue_wait_ms BIGINT NOT NULL,
  hold_ms BIGINT NOT NULL,
  PRIMARY KEY (pool, start)
);
CREATE INDEX metrics_buckets_by_start ON metrics_buckets (start);
CREATE TABLE access_log (
  id BIGSERIAL PRIMARY KEY,
  pool TEXT NOT NULL,
  at BIGINT NOT NULL,
  key_id BIGINT,
  outcome TEXT NOT NULL
    CHECK (outcome IN ('admitted', 'queued', 'rejected', 'timed_out', 'aborted', 'unavailable')),
  reason TEXT,
  queued_ms BIGINT NOT NULL,
  remote_address TEXT,
  source TEXT NOT NULL CHECK (source IN ('lock', 'proxy'))
);
CREATE INDEX access_log_by_pool_time ON access_log (pool, at);
`;

/** The MCP endpoint's OAuth clients, grants, codes and tokens (secrets only as hashes). */
const OAUTH_SCHEMA = `
CREATE TABLE oauth_clients (
  client_id TEXT PRIMARY KEY,
  client_name TEXT NOT NULL,
  redirect_uris TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE TABLE oauth_grants (
  id BIGSERIAL PRIMARY KEY,
  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  team_id BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  client_id TEXT NOT NULL,
  client_name TEXT NOT NULL,
  redirect_host TEXT NOT NULL,
  scopes TEXT NOT NULL,
  resource TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT,
  revoked_at BIGINT
);
CREATE INDEX oauth_grants_by_user ON oauth_grants (team_id, user_id);
CREATE TABLE oauth_codes (
  code_hash TEXT PRIMARY KEY,
  grant_id BIGINT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  client_id TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);
CREATE INDEX oauth_codes_by_grant ON oauth_codes (grant_id);
CREATE TABLE oauth_tokens (
  token_hash TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  grant_id BIGINT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  scopes TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);
CREATE INDEX oauth_tokens_by_grant ON oauth_tokens (grant_id);
CREATE INDEX oauth_tokens_by_expiry ON oauth_tokens (expires_at);
`;

/**
 * Caller policies of a pool (`PoolRecord.callerPolicies`, JSON; NULL for none), a key's
 * request-signing secret for the `hmac` policy (encrypted JSON, like `signing_secret`), and the
 * access log's outcome `refused` (a caller policy turned the attempt away; its reason names
 * the policy).
 */
const CALLER_POLICIES = `
ALTER TABLE pools ADD COLUMN caller_policies TEXT;
ALTER TABLE pool_keys ADD COLUMN request_secret TEXT;
ALTER TABLE access_log DROP CONSTRAINT access_log_outcome_check;
ALTER TABLE access_log ADD CONSTRAINT access_log_outcome_check
  CHECK (outcome IN ('admitted', 'queued', 'rejected', 'timed_out', 'aborted', 'unavailable', 'refused'));
`;

/**
 * The dashboard's sign-in records, as the SQLite store keeps them (its migrations 7 and 8):
 * password hashes (scrypt), sessions, one-time sign-in and setup links (by the SHA-256 of
 * their secret, never the secret) and failed sign-ins per fixed window, so a session, a link
 * or a throttle holds on every server of a fleet.
 */
const SIGN_IN_SCHEMA = `
CREATE TABLE user_passwords (
  user_id BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  hash TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE TABLE sessions (
  id_hash TEXT PRIMARY KEY,
  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  team_id BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_by_user ON sessions (user_id, team_id);
CREATE TABLE sign_in_links (
  token_hash TEXT PRIMARY KEY,
  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  team_id BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE TABLE sign_in_failures (
  key TEXT PRIMARY KEY,
  window_start BIGINT NOT NULL,
  count INTEGER NOT NULL
);
CREATE TABLE setup_tokens (
  token_hash TEXT PRIMARY KEY,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
`;

/**
 * The upstream's status of a proxied call (`AccessLogEntry.upstreamStatus`); nullable, so
 * adding it rewrites no rows and older rows read as "no answer recorded".
 */
const ACCESS_LOG_UPSTREAM_STATUS = `
ALTER TABLE access_log ADD COLUMN upstream_status INTEGER
  CHECK (upstream_status IS NULL OR upstream_status BETWEEN 100 AND 599);
`;

/**
 * A fixed text sealed with the first `SLUICE_SECRET_KEY` that opened the database, so a
 * server or command with another key is refused at once (see `holdsFleetSecretKey`). Not a
 * catalog table: no change marker moves.
 */
const SECRET_KEY_CHECK = `
CREATE TABLE secret_key_check (
  id SMALLINT PRIMARY KEY CHECK (id = 1),
  sealed TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
`;

/**
 * Where the serving Redis servers of the fleet keep their slots, so one with another Redis
 * target is refused (see `lockPostgresFleet`). Not a catalog table: no change marker moves.
 */
const FLEET_SLOT_STORE = `
CREATE TABLE fleet_slot_store (
  id SMALLINT PRIMARY KEY CHECK (id = 1),
  target TEXT NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
`;

/** The schema history, oldest first. Append only; never edit a shipped entry. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { version: 1, name: "catalog", sql: CATALOG_SCHEMA },
  { version: 2, name: "metrics buckets and access log", sql: METRICS_AND_ACCESS_LOG_SCHEMA },
  { version: 3, name: "oauth grants and tokens", sql: OAUTH_SCHEMA },
  { version: 4, name: "caller policies", sql: CALLER_POLICIES },
  { version: 5, name: "dashboard sign-in", sql: SIGN_IN_SCHEMA },
  { version: 6, name: "access log upstream status", sql: ACCESS_LOG_UPSTREAM_STATUS },
  { version: 7, name: "secret key check", sql: SECRET_KEY_CHECK },
  { version: 8, name: "fleet slot store", sql: FLEET_SLOT_STORE },
];

/** Any fixed number: every Sluice server migrating one database takes this same lock. */
const MIGRATION_LOCK = 0x51_1c_e0_01;

/**
 * Applies the migrations a database lacks, each in its own transaction that first takes
 * `pg_advisory_xact_lock`: servers starting at once queue on the lock, and each finds the
 * versions applied by those before it in `schema_migrations`, so every migration runs exactly
 * once. Returns the versions this call applied.
 *
 * @example
 * ```ts
 * const applied = await migratePostgres(pool); // [1, 2] on an empty database, [] after
 * ```
 */
export async function migratePostgres(
  pool: pg.Pool,
  migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS,
): Promise<number[]> {
  const applied: number[] = [];
  for (const migration of migrations) {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      );
      const done = await client.query("SELECT 1 FROM schema_migrations WHERE version = $1", [
        migration.version,
      ]);
      if (done.rowCount === 0) {
        await client.query(migration.sql);
        await client.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
          migration.version,
          migration.name,
        ]);
        applied.push(migration.version);
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
  return applied;
}
