/**
 * Tables of the OAuth authorization server behind the MCP server (issue 17): registered
 * clients, grants (one per consent), and the hashes of codes and tokens. Deleting a user or
 * team deletes their grants, and a grant's codes and tokens go with it.
 */
export const OAUTH_SCHEMA = `
CREATE TABLE oauth_clients (
  client_id TEXT PRIMARY KEY,
  client_name TEXT NOT NULL,
  redirect_uris TEXT NOT NULL CHECK (json_valid(redirect_uris)),
  created_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE oauth_grants (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  team_id INTEGER NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  client_id TEXT NOT NULL,
  client_name TEXT NOT NULL,
  redirect_host TEXT NOT NULL,
  scopes TEXT NOT NULL CHECK (json_valid(scopes)),
  resource TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX oauth_grants_by_user ON oauth_grants (team_id, user_id);

CREATE TABLE oauth_codes (
  code_hash TEXT PRIMARY KEY,
  grant_id INTEGER NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  client_id TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
) WITHOUT ROWID;
CREATE INDEX oauth_codes_by_grant ON oauth_codes (grant_id);

CREATE TABLE oauth_tokens (
  token_hash TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  grant_id INTEGER NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  scopes TEXT NOT NULL CHECK (json_valid(scopes)),
  expires_at INTEGER NOT NULL,
  used_at INTEGER
) WITHOUT ROWID;
CREATE INDEX oauth_tokens_by_grant ON oauth_tokens (grant_id);
CREATE INDEX oauth_tokens_by_expiry ON oauth_tokens (expires_at);
`;
