import type {
  Ability,
  ApiTokenRecord,
  BudgetRecord,
  EncryptedSecret,
  KeyAccess,
  PoolBackend,
  PoolDatabaseRecord,
  PoolInput,
  PoolKeyRecord,
  PoolRecord,
} from "../../src/catalog/types.js";
import type { CallerPolicies } from "../../src/policies/policy-schema.js";

// Column ↔ record mapping for the catalog tables: snake_case columns, INTEGER 0/1 booleans,
// JSON TEXT for lists, maps and encrypted secrets (better-sqlite3 binds neither booleans
// nor objects).

export interface ApiTokenRow {
  id: number;
  team_id: number;
  user_id: number;
  name: string;
  abilities: string;
  token_hash: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface PoolRow {
  id: number;
  team_id: number;
  name: string;
  description: string | null;
  subdomain: string;
  backend: string;
  origin: string;
  max_concurrent: number;
  queue_size: number;
  queue_timeout_ms: number;
  rpm: number | null;
  request_timeout_ms: number;
  term_ms: number;
  renew_interval_ms: number;
  adaptive: number;
  require_key: number;
  allow_authorization_header: number;
  credential_header: string | null;
  credential_value: string | null;
  database_connection: string | null;
  origin_signing: number;
  read_methods: string;
  read_paths: string | null;
  caller_policies: string | null;
  budget_id: number | null;
  reserved_concurrent: number;
  metrics_retention_days: number;
  created_at: number;
  updated_at: number;
}

export interface PoolKeyRow {
  id: number;
  pool_id: number;
  label: string;
  last_four: string;
  key_hash: string;
  access: string;
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
  signing_secret: string | null;
  request_secret: string | null;
}

export interface BudgetRow {
  id: number;
  team_id: number;
  name: string;
  origin_max_concurrent: number | null;
}

function bit(value: boolean): number {
  return value ? 1 : 0;
}

function jsonOrNull(value: unknown): string | null {
  return value === null ? null : JSON.stringify(value);
}

function parseOrNull<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

export function apiTokenFromRow(row: ApiTokenRow): ApiTokenRecord {
  return {
    id: row.id,
    teamId: row.team_id,
    userId: row.user_id,
    name: row.name,
    abilities: JSON.parse(row.abilities) as Ability[],
    tokenHash: row.token_hash,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

export function apiTokenParams(token: Omit<ApiTokenRecord, "id">): Omit<ApiTokenRow, "id"> {
  return {
    team_id: token.teamId,
    user_id: token.userId,
    name: token.name,
    abilities: JSON.stringify(token.abilities),
    token_hash: token.tokenHash,
    created_at: token.createdAt,
    expires_at: token.expiresAt,
    revoked_at: token.revokedAt,
    last_used_at: token.lastUsedAt,
  };
}

export function budgetFromRow(row: BudgetRow): BudgetRecord {
  return {
    id: row.id,
    teamId: row.team_id,
    name: row.name,
    originMaxConcurrent: row.origin_max_concurrent,
  };
}

export function poolFromRow(row: PoolRow): PoolRecord {
  const credentialValue = parseOrNull<EncryptedSecret>(row.credential_value);
  return {
    id: row.id,
    teamId: row.team_id,
    name: row.name,
    description: row.description,
    subdomain: row.subdomain,
    backend: row.backend as PoolBackend,
    origin: row.origin,
    maxConcurrent: row.max_concurrent,
    queueSize: row.queue_size,
    queueTimeoutMs: row.queue_timeout_ms,
    rpm: row.rpm,
    requestTimeoutMs: row.request_timeout_ms,
    termMs: row.term_ms,
    renewIntervalMs: row.renew_interval_ms,
    adaptive: row.adaptive === 1,
    requireKey: row.require_key === 1,
    allowAuthorizationHeader: row.allow_authorization_header === 1,
    credential:
      row.credential_header !== null && credentialValue !== null
        ? { header: row.credential_header, value: credentialValue }
        : null,
    database: parseOrNull<PoolDatabaseRecord>(row.database_connection),
    originSigning: row.origin_signing === 1,
    readMethods: JSON.parse(row.read_methods) as string[],
    readPaths: parseOrNull<Record<string, string[]>>(row.read_paths),
    callerPolicies: parseOrNull<CallerPolicies>(row.caller_policies),
    budgetId: row.budget_id,
    reservedConcurrent: row.reserved_concurrent,
    metricsRetentionDays: row.metrics_retention_days,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Named parameters for an insert or update of every pool column but id and created_at. */
export function poolParams(
  teamId: number,
  input: PoolInput,
  updatedAt: number,
): Omit<PoolRow, "id" | "created_at"> {
  return {
    team_id: teamId,
    name: input.name,
    description: input.description,
    subdomain: input.subdomain,
    backend: input.backend,
    origin: input.origin,
    max_concurrent: input.maxConcurrent,
    queue_size: input.queueSize,
    queue_timeout_ms: input.queueTimeoutMs,
    rpm: input.rpm,
    request_timeout_ms: input.requestTimeoutMs,
    term_ms: input.termMs,
    renew_interval_ms: input.renewIntervalMs,
    adaptive: bit(input.adaptive),
    require_key: bit(input.requireKey),
    allow_authorization_header: bit(input.allowAuthorizationHeader),
    credential_header: input.credential?.header ?? null,
    credential_value: jsonOrNull(input.credential?.value ?? null),
    database_connection: jsonOrNull(input.database),
    origin_signing: bit(input.originSigning),
    read_methods: JSON.stringify(input.readMethods),
    read_paths: jsonOrNull(input.readPaths),
    caller_policies: jsonOrNull(input.callerPolicies),
    budget_id: input.budgetId,
    reserved_concurrent: input.reservedConcurrent,
    metrics_retention_days: input.metricsRetentionDays,
    updated_at: updatedAt,
  };
}

export function poolKeyFromRow(row: PoolKeyRow): PoolKeyRecord {
  return {
    id: row.id,
    poolId: row.pool_id,
    label: row.label,
    lastFour: row.last_four,
    keyHash: row.key_hash,
    access: row.access as KeyAccess,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
    signingSecret: parseOrNull<EncryptedSecret>(row.signing_secret),
    requestSecret: parseOrNull<EncryptedSecret>(row.request_secret),
  };
}

export function poolKeyParams(key: Omit<PoolKeyRecord, "id">): Omit<PoolKeyRow, "id"> {
  return {
    pool_id: key.poolId,
    label: key.label,
    last_four: key.lastFour,
    key_hash: key.keyHash,
    access: key.access,
    expires_at: key.expiresAt,
    revoked_at: key.revokedAt,
    created_at: key.createdAt,
    signing_secret: jsonOrNull(key.signingSecret),
    request_secret: jsonOrNull(key.requestSecret),
  };
}

/** Columns written by {@link poolParams}, for building statements without repeating them. */
export const POOL_WRITE_COLUMNS = [
  "team_id",
  "name",
  "description",
  "subdomain",
  "backend",
  "origin",
  "max_concurrent",
  "queue_size",
  "queue_timeout_ms",
  "rpm",
  "request_timeout_ms",
  "term_ms",
  "renew_interval_ms",
  "adaptive",
  "require_key",
  "allow_authorization_header",
  "credential_header",
  "credential_value",
  "database_connection",
  "origin_signing",
  "read_methods",
  "read_paths",
  "caller_policies",
  "budget_id",
  "reserved_concurrent",
  "metrics_retention_days",
  "updated_at",
] as const satisfies readonly (keyof Omit<PoolRow, "id" | "created_at">)[];
