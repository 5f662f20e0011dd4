import type { Clock } from "../clock/clock.js";
import type { CatalogDeps } from "./catalog-deps.js";
import type { SecretBox } from "./encryption.js";
import { decryptDatabaseUrl, type PoolDatabaseLimits, sealDatabase } from "./pool-database.js";
import {
  type MintedPoolKey,
  mintPoolKey,
  type NewPoolKey,
  revokePoolKey,
  verifyPoolKey,
} from "./pool-keys.js";
import {
  decryptCredential,
  decryptRequestSecret,
  decryptSigningSecret,
  sealCredential,
  type UpstreamCredential,
} from "./pool-secrets.js";
import {
  addMember,
  createTeamWithOwner,
  type NewMember,
  type NewTeamWithOwner,
  type TeamWithOwner,
} from "./teams.js";
import {
  type AuthenticatedToken,
  authenticateApiToken,
  type CreatedApiToken,
  createApiToken,
  type NewApiToken,
  revokeApiToken,
  touchApiToken,
} from "./tokens.js";
import type {
  ApiTokenRecord,
  CatalogStore,
  CredentialRecord,
  MembershipRecord,
  PoolDatabaseRecord,
  PoolKeyRecord,
  PoolRecord,
  Role,
  UserRecord,
} from "./types.js";

/**
 * The catalog rules (teams, API tokens, pool keys, stored secrets) over a {@link CatalogStore},
 * a {@link SecretBox} and a {@link Clock}. Each method delegates to a function of the same
 * name in its concept file (`teams.ts`, `tokens.ts`, `pool-keys.ts`, `pool-secrets.ts`), which
 * can also be called directly with {@link CatalogDeps}.
 *
 * @example
 * ```ts
 * const catalog = new CatalogService({ store, secretBox, clock: systemClock });
 * const { team, owner } = await catalog.createTeamWithOwner({
 *   teamName: "Acme", slug: "acme", ownerName: "Ada", ownerEmail: "ada@acme.test",
 * });
 * const { plaintext } = await catalog.createApiToken({
 *   teamId: team.id, actorUserId: owner.id, name: "CI", abilities: ["pools:read"], lifetime: "1y",
 * });
 * (await catalog.authenticateApiToken(plaintext)).abilities; // ["pools:read"]
 * ```
 */
export class CatalogService {
  readonly store: CatalogStore;
  readonly secretBox: SecretBox;
  readonly clock: Clock;
  private readonly deps: CatalogDeps;

  constructor(deps: CatalogDeps) {
    this.store = deps.store;
    this.secretBox = deps.secretBox;
    this.clock = deps.clock;
    this.deps = { store: deps.store, secretBox: deps.secretBox, clock: deps.clock };
  }

  createTeamWithOwner(input: NewTeamWithOwner): Promise<TeamWithOwner> {
    return createTeamWithOwner(this.deps, input);
  }

  addMember(
    teamId: number,
    user: NewMember,
    role: Role,
  ): Promise<{ user: UserRecord; membership: MembershipRecord }> {
    return addMember(this.deps, teamId, user, role);
  }

  createApiToken(input: NewApiToken): Promise<CreatedApiToken> {
    return createApiToken(this.deps, input);
  }

  revokeApiToken(input: {
    teamId: number;
    actorUserId: number;
    tokenId: number;
  }): Promise<ApiTokenRecord | undefined> {
    return revokeApiToken(this.deps, input);
  }

  authenticateApiToken(plaintext: string | null | undefined): Promise<AuthenticatedToken> {
    return authenticateApiToken(this.deps, plaintext);
  }

  touchApiToken(token: ApiTokenRecord): Promise<boolean> {
    return touchApiToken(this.deps, token);
  }

  mintPoolKey(input: NewPoolKey): Promise<MintedPoolKey> {
    return mintPoolKey(this.deps, input);
  }

  revokePoolKey(
    teamId: number,
    subdomain: string,
    keyId: number,
  ): Promise<PoolKeyRecord | undefined> {
    return revokePoolKey(this.deps, teamId, subdomain, keyId);
  }

  verifyPoolKey(
    poolOrSubdomain: PoolRecord | string,
    plaintext: string | null | undefined,
    now?: number,
  ): Promise<PoolKeyRecord | null> {
    return verifyPoolKey(this.deps, poolOrSubdomain, plaintext, now);
  }

  /**
   * Runs `body` as one unit of the store (see {@link CatalogStore.atomically}), with a service
   * whose every call belongs to the unit.
   *
   * @example
   * ```ts
   * await catalog.atomically(async (unit) => {
   *   const budget = await unit.store.upsertBudget(teamId, { name: "llm", originMaxConcurrent: 8 });
   *   await unit.store.upsertPool(teamId, { ...pool, budgetId: budget.id });
   * });
   * ```
   */
  atomically<T>(body: (unit: CatalogService) => Promise<T>): Promise<T> {
    return this.store.atomically((store) => body(new CatalogService({ ...this.deps, store })));
  }

  sealCredential(header: string, value: string): CredentialRecord {
    return sealCredential(this.secretBox, header, value);
  }

  decryptCredential(pool: PoolRecord): UpstreamCredential | null {
    return decryptCredential(this.secretBox, pool);
  }

  decryptSigningSecret(key: PoolKeyRecord): string | null {
    return decryptSigningSecret(this.secretBox, key);
  }

  decryptRequestSecret(key: PoolKeyRecord): string | null {
    return decryptRequestSecret(this.secretBox, key);
  }

  sealDatabase(connectionString: string, limits: PoolDatabaseLimits): PoolDatabaseRecord {
    return sealDatabase(this.secretBox, connectionString, limits);
  }

  decryptDatabaseUrl(pool: PoolRecord): string | null {
    return decryptDatabaseUrl(this.secretBox, pool);
  }
}
