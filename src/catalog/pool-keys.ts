import { PoolNotFoundError } from "../errors.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { plainTextIssues } from "./plain-text.js";
import {
  generatePoolKey,
  generateRequestSecret,
  generateSigningSecret,
  hashSecret,
  hasSecretShape,
  lastFour,
  POOL_KEY_PREFIX,
  secretsEqual,
} from "./secrets.js";
import {
  KEY_EXPIRY_PRESETS,
  type KeyAccess,
  type KeyExpiryPreset,
  type PoolKeyRecord,
  type PoolRecord,
} from "./types.js";
import {
  characterCount,
  fieldIssue,
  isAbsent,
  parseIsoDateTime,
  throwIfIssues,
} from "./validation.js";

export const KEY_LABEL_MAX = 60;
/**
 * Label of a key minted without one. Empty rather than invented: people tell unlabelled keys
 * apart by `last_four` and `created_at`.
 */
export const DEFAULT_KEY_LABEL = "";
const KEY_ACCESSES: readonly KeyAccess[] = ["read", "write"];
const PRESET_DURATION_MS: Record<KeyExpiryPreset, number | null> = {
  none: null,
  "1h": 3_600_000,
  "24h": 86_400_000,
  "7d": 604_800_000,
};

/**
 * A key-mint request, as decoded from the PoolKeyCreateRequest body (field values are
 * `unknown` because they come straight from JSON; `null` counts as omitted).
 */
export interface NewPoolKey {
  teamId: number;
  subdomain: string;
  label?: unknown;
  access?: unknown;
  expiresPreset?: unknown;
  expiresAt?: unknown;
}

export interface MintedPoolKey {
  key: PoolKeyRecord;
  /** Shown once; only its hash is stored. */
  plaintext: string;
  /** Shown once, only when the pool signs requests to its origin; stored encrypted. */
  signingSecret?: string;
  /** Shown once, only when the pool has the `hmac` caller policy; stored encrypted. */
  requestSecret?: string;
}

interface KeySettings {
  label: string;
  access: KeyAccess;
  expiresAt: number | null;
}

function parseLabel(value: unknown, issues: string[]): string {
  if (isAbsent(value)) return DEFAULT_KEY_LABEL;
  if (typeof value !== "string") {
    issues.push(fieldIssue("label", "Must be a string."));
    return DEFAULT_KEY_LABEL;
  }
  const label = value.trim();
  if (characterCount(label) > KEY_LABEL_MAX) {
    issues.push(fieldIssue("label", `Must be at most ${KEY_LABEL_MAX} characters.`));
  }
  issues.push(...plainTextIssues("label", label));
  return label;
}

function parseAccess(value: unknown, issues: string[]): KeyAccess {
  // Omitting access keeps the behaviour of keys minted before access existed: full write.
  if (isAbsent(value)) return "write";
  if (KEY_ACCESSES.includes(value as KeyAccess)) return value as KeyAccess;
  issues.push(fieldIssue("access", `Must be one of ${KEY_ACCESSES.join(", ")}.`));
  return "write";
}

function parseExpiry(preset: unknown, at: unknown, now: number, issues: string[]): number | null {
  if (!isAbsent(preset) && !isAbsent(at)) {
    issues.push(fieldIssue("expires_at", "Send either expires_preset or expires_at, not both."));
    return null;
  }
  if (!isAbsent(preset)) {
    if (!KEY_EXPIRY_PRESETS.includes(preset as KeyExpiryPreset)) {
      issues.push(fieldIssue("expires_preset", `Must be one of ${KEY_EXPIRY_PRESETS.join(", ")}.`));
      return null;
    }
    const duration = PRESET_DURATION_MS[preset as KeyExpiryPreset];
    return duration === null ? null : now + duration;
  }
  if (isAbsent(at)) return null;
  const expiresAt = typeof at === "string" ? parseIsoDateTime(at) : null;
  if (expiresAt === null) {
    issues.push(fieldIssue("expires_at", "Must be an ISO-8601 date-time with a time zone."));
  } else if (expiresAt <= now) {
    issues.push(fieldIssue("expires_at", "Must be in the future."));
  }
  return expiresAt;
}

/**
 * Validates a mint request against the contract (label ≤ 60 characters, access read|write
 * defaulting to write, preset none|1h|24h|7d or a future ISO-8601 `expires_at`, not both).
 * Every problem is reported at once, as `"field: message"` issues named after the body fields.
 *
 * @example
 * ```ts
 * parseKeySettings({ teamId, subdomain, access: "read", expiresPreset: "1h" }, clock.now());
 * // { label: "", access: "read", expiresAt: now + 3_600_000 }
 * ```
 */
export function parseKeySettings(input: NewPoolKey, now: number): KeySettings {
  const issues: string[] = [];
  const settings: KeySettings = {
    label: parseLabel(input.label, issues),
    access: parseAccess(input.access, issues),
    expiresAt: parseExpiry(input.expiresPreset, input.expiresAt, now, issues),
  };
  throwIfIssues("pool key", issues);
  return settings;
}

async function requirePool(
  deps: CatalogDeps,
  teamId: number,
  subdomain: string,
): Promise<PoolRecord> {
  const pool = await deps.store.getPoolBySubdomain(teamId, subdomain);
  if (!pool) throw new PoolNotFoundError(subdomain);
  return pool;
}

/**
 * Mints a key for a pool of the team. A pool of another team is a PoolNotFoundError (404),
 * checked before the body (422). The signing secret exists only when the pool has origin
 * signing on, the request secret only when it has the `hmac` caller policy.
 *
 * @example
 * ```ts
 * const { key, plaintext } = await mintPoolKey(deps, { teamId, subdomain: "llm", access: "read", expiresPreset: "7d" });
 * ```
 */
export async function mintPoolKey(deps: CatalogDeps, input: NewPoolKey): Promise<MintedPoolKey> {
  const pool = await requirePool(deps, input.teamId, input.subdomain);
  const now = deps.clock.now();
  const settings = parseKeySettings(input, now);
  const plaintext = generatePoolKey();
  const signingSecret = pool.originSigning ? generateSigningSecret() : undefined;
  const requestSecret = pool.callerPolicies?.hmac ? generateRequestSecret() : undefined;
  const key = await deps.store.insertPoolKey({
    poolId: pool.id,
    ...settings,
    lastFour: lastFour(plaintext),
    keyHash: hashSecret(plaintext),
    revokedAt: null,
    createdAt: now,
    signingSecret: signingSecret === undefined ? null : deps.secretBox.seal(signingSecret),
    requestSecret: requestSecret === undefined ? null : deps.secretBox.seal(requestSecret),
  });
  return {
    key,
    plaintext,
    ...(signingSecret === undefined ? {} : { signingSecret }),
    ...(requestSecret === undefined ? {} : { requestSecret }),
  };
}

/**
 * Revokes a key of a team's pool; undefined when the pool has no such key (404). Revoking
 * twice keeps the first revocation time.
 *
 * @example
 * ```ts
 * const revoked = await revokePoolKey(deps, teamId, "llm", 12);
 * ```
 */
export async function revokePoolKey(
  deps: CatalogDeps,
  teamId: number,
  subdomain: string,
  keyId: number,
): Promise<PoolKeyRecord | undefined> {
  const pool = await requirePool(deps, teamId, subdomain);
  return deps.store.revokePoolKey(pool.id, keyId, deps.clock.now());
}

/**
 * The key record when `plaintext` is a live key of this pool; null when it is malformed,
 * unknown, another pool's key, revoked, or expired (a key is dead from its `expiresAt` on).
 * A pool given by subdomain is looked up across teams, as the proxy knows only the host.
 *
 * @example
 * ```ts
 * const key = await verifyPoolKey(deps, pool, request.headers.get("x-svc-key"));
 * if (!key && pool.requireKey) throw new UnauthorizedError();
 * ```
 */
export async function verifyPoolKey(
  deps: CatalogDeps,
  poolOrSubdomain: PoolRecord | string,
  plaintext: string | null | undefined,
  now: number = deps.clock.now(),
): Promise<PoolKeyRecord | null> {
  if (typeof plaintext !== "string" || !hasSecretShape(plaintext, POOL_KEY_PREFIX)) return null;
  const pool =
    typeof poolOrSubdomain === "string"
      ? await deps.store.findPoolBySubdomain(poolOrSubdomain)
      : poolOrSubdomain;
  if (!pool) return null;
  const presentedHash = hashSecret(plaintext);
  const key = await deps.store.findPoolKeyByHash(presentedHash);
  if (!key || key.poolId !== pool.id || !secretsEqual(key.keyHash, presentedHash)) return null;
  if (key.revokedAt !== null) return null;
  if (key.expiresAt !== null && now >= key.expiresAt) return null;
  return key;
}
