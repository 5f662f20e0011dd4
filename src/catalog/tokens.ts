import { ForbiddenError, UnauthorizedError } from "../errors.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { plainTextIssues } from "./plain-text.js";
import {
  API_TOKEN_PREFIX,
  generateApiToken,
  hashSecret,
  hasSecretShape,
  secretsEqual,
} from "./secrets.js";
import {
  ABILITIES,
  type Ability,
  type ApiTokenRecord,
  type TeamRecord,
  TOKEN_LIFETIMES,
  type TokenLifetime,
  type UserRecord,
} from "./types.js";
import { addUtcMonths, characterCount, fieldIssue, throwIfIssues } from "./validation.js";

const TOKEN_NAME_MAX = 100;
const LIFETIME_MONTHS: Record<TokenLifetime, number> = { "1m": 1, "6m": 6, "1y": 12 };
/** lastUsedAt is informational; writing it on every request would turn reads into writes. */
export const TOKEN_TOUCH_INTERVAL_MS = 60_000;

export interface NewApiToken {
  teamId: number;
  /** The person creating the token; the token will act as them. */
  actorUserId: number;
  name: string;
  abilities: readonly string[];
  lifetime: TokenLifetime;
}

export interface CreatedApiToken {
  token: ApiTokenRecord;
  /** Shown once; only its hash is stored. */
  plaintext: string;
}

export interface AuthenticatedToken {
  token: ApiTokenRecord;
  user: UserRecord;
  team: TeamRecord;
  abilities: Ability[];
}

/** Contract section 5: only organization owners and admins create or revoke tokens. */
async function requireTokenManager(
  deps: CatalogDeps,
  teamId: number,
  userId: number,
): Promise<void> {
  const membership = await deps.store.getMembership(teamId, userId);
  if (!membership || membership.role === "member") {
    throw new ForbiddenError("Only organization owners and admins may manage API tokens.");
  }
}

function tokenIssues(input: NewApiToken): string[] {
  const issues: string[] = [];
  if (typeof input.name !== "string" || input.name.trim() === "") {
    issues.push(fieldIssue("name", "Required."));
  } else if (characterCount(input.name.trim()) > TOKEN_NAME_MAX) {
    issues.push(fieldIssue("name", `Must be at most ${TOKEN_NAME_MAX} characters.`));
  } else {
    issues.push(...plainTextIssues("name", input.name.trim()));
  }
  if (!Array.isArray(input.abilities) || input.abilities.length === 0) {
    issues.push(fieldIssue("abilities", "Choose at least one ability."));
  } else {
    for (const ability of input.abilities) {
      if (!(ABILITIES as readonly unknown[]).includes(ability)) {
        issues.push(
          fieldIssue(
            "abilities",
            `Unknown ability "${String(ability)}"; the abilities are ${ABILITIES.join(", ")}.`,
          ),
        );
      }
    }
  }
  if (!TOKEN_LIFETIMES.includes(input.lifetime)) {
    issues.push(fieldIssue("lifetime", `Must be one of ${TOKEN_LIFETIMES.join(", ")}.`));
  }
  return issues;
}

/**
 * Creates a Control API token for the acting owner or admin. Lifetimes are calendar months
 * in UTC (`1m`, `6m`, `1y` = 12 months), the day clamped to the month's length. Abilities
 * are deduplicated and kept in {@link ABILITIES} order.
 *
 * @example
 * ```ts
 * const { plaintext } = await createApiToken(deps, {
 *   teamId, actorUserId: ownerId, name: "CI", abilities: ["pools:read"], lifetime: "6m",
 * });
 * ```
 */
export async function createApiToken(
  deps: CatalogDeps,
  input: NewApiToken,
): Promise<CreatedApiToken> {
  await requireTokenManager(deps, input.teamId, input.actorUserId);
  throwIfIssues("API token", tokenIssues(input));
  const now = deps.clock.now();
  const plaintext = generateApiToken();
  const token = await deps.store.insertApiToken({
    teamId: input.teamId,
    userId: input.actorUserId,
    name: input.name.trim(),
    abilities: ABILITIES.filter((ability) => input.abilities.includes(ability)),
    tokenHash: hashSecret(plaintext),
    createdAt: now,
    expiresAt: addUtcMonths(now, LIFETIME_MONTHS[input.lifetime]),
    revokedAt: null,
    lastUsedAt: null,
  });
  return { token, plaintext };
}

/**
 * Revokes a token of the team (owners and admins only). Returns undefined when the team has
 * no such token; revoking twice keeps the first revocation time.
 *
 * @example
 * ```ts
 * await revokeApiToken(deps, { teamId, actorUserId: adminId, tokenId: 7 });
 * ```
 */
export async function revokeApiToken(
  deps: CatalogDeps,
  input: { teamId: number; actorUserId: number; tokenId: number },
): Promise<ApiTokenRecord | undefined> {
  await requireTokenManager(deps, input.teamId, input.actorUserId);
  return deps.store.revokeApiToken(input.teamId, input.tokenId, deps.clock.now());
}

/**
 * Resolves a presented bearer token to its token, user, team and abilities. Missing,
 * malformed, unknown, expired and revoked tokens, and tokens whose creator has left the
 * team, throw {@link UnauthorizedError}; the message never contains the token.
 *
 * @example
 * ```ts
 * const { team, abilities } = await authenticateApiToken(deps, bearer);
 * ```
 */
export async function authenticateApiToken(
  deps: CatalogDeps,
  plaintext: string | null | undefined,
): Promise<AuthenticatedToken> {
  if (typeof plaintext !== "string" || plaintext === "") {
    throw new UnauthorizedError("Missing API token.");
  }
  if (!hasSecretShape(plaintext, API_TOKEN_PREFIX))
    throw new UnauthorizedError("Invalid API token.");
  const presentedHash = hashSecret(plaintext);
  const token = await deps.store.findApiTokenByHash(presentedHash);
  // The lookup is by hash, so its timing reveals nothing about the token; the constant-time
  // compare guards against a store that matches loosely (case, prefix).
  if (!token || !secretsEqual(token.tokenHash, presentedHash)) {
    throw new UnauthorizedError("Invalid API token.");
  }
  if (token.revokedAt !== null) throw new UnauthorizedError("The API token has been revoked.");
  if (deps.clock.now() >= token.expiresAt)
    throw new UnauthorizedError("The API token has expired.");
  const team = await deps.store.getTeam(token.teamId);
  const user = await deps.store.getUser(token.userId);
  // A token acts as its creator within the team, so it stops when they leave the team.
  if (!team || !user || !(await deps.store.getMembership(token.teamId, token.userId))) {
    throw new UnauthorizedError("Invalid API token.");
  }
  return { token, user, team, abilities: [...token.abilities] };
}

/**
 * Records use of a token, at most once per {@link TOKEN_TOUCH_INTERVAL_MS}. Returns whether
 * it wrote.
 *
 * @example
 * ```ts
 * await touchApiToken(deps, authenticated.token);
 * ```
 */
export async function touchApiToken(deps: CatalogDeps, token: ApiTokenRecord): Promise<boolean> {
  const now = deps.clock.now();
  if (token.lastUsedAt !== null && now - token.lastUsedAt < TOKEN_TOUCH_INTERVAL_MS) return false;
  await deps.store.touchApiToken(token.id, now);
  return true;
}
