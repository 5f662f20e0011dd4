import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { hashSecret } from "../../src/catalog/secrets.js";
import type { ApiTokenRecord, CatalogStore, PoolKeyRecord } from "../../src/catalog/types.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { ConflictError, InvalidArgumentError } from "../../src/errors.js";
import { poolInput, testSecretKey } from "./fixtures.js";

export type CatalogStoreFactory = (clock: ManualClock) => CatalogStore | Promise<CatalogStore>;

const sealed = { iv: "aXY=", tag: "dGFn", data: "ZGF0YQ==" };

function tokenFields(teamId: number, userId: number, secret: string): Omit<ApiTokenRecord, "id"> {
  return {
    teamId,
    userId,
    name: "CI",
    abilities: ["pools:read", "keys:write"],
    tokenHash: hashSecret(secret),
    createdAt: 1_000,
    expiresAt: 9_000,
    revokedAt: null,
    lastUsedAt: null,
  };
}

function keyFields(poolId: number, secret: string): Omit<PoolKeyRecord, "id"> {
  return {
    poolId,
    label: "worker",
    lastFour: secret.slice(-4),
    keyHash: hashSecret(secret),
    access: "read",
    expiresAt: 5_000,
    revokedAt: null,
    createdAt: 1_000,
    signingSecret: sealed,
    requestSecret: null,
  };
}

/**
 * The behaviour every CatalogStore must have. Run it from each implementation's test file:
 * `describeCatalogStoreContract("memory", (clock) => new MemoryCatalogStore({ clock }))`.
 */
export function describeCatalogStoreContract(name: string, factory: CatalogStoreFactory): void {
  describe(`CatalogStore contract: ${name}`, () => {
    let clock: ManualClock;
    let store: CatalogStore;

    beforeEach(async () => {
      clock = new ManualClock(1_700_000_000_000);
      store = await factory(clock);
    });
    afterEach(() => store.close());

    function twoTeams() {
      const a = store.createTeam({ name: "A", slug: "team-a" });
      const b = store.createTeam({ name: "B", slug: "team-b" });
      const user = store.createUser({ name: "Ada", email: "ada@a.test" });
      store.setMembership({ teamId: a.id, userId: user.id, role: "owner" });
      return { a, b, user };
    }

    describe("teams, users, memberships", () => {
      it("creates and finds teams by id and slug", () => {
        const team = store.createTeam({ name: "Acme", slug: "acme" });
        expect(store.getTeam(team.id)).toEqual({ id: team.id, name: "Acme", slug: "acme" });
        expect(store.findTeamBySlug("acme")).toEqual(team);
        expect(store.findTeamBySlug("other")).toBeUndefined();
        expect(store.getTeam(team.id + 1000)).toBeUndefined();
      });

      it("lists every team by id", () => {
        expect(store.listTeams()).toEqual([]);
        const b = store.createTeam({ name: "B", slug: "team-b" });
        const a = store.createTeam({ name: "A", slug: "team-a" });
        expect(store.listTeams()).toEqual([b, a]);
      });

      it("refuses a taken team slug with ConflictError", () => {
        store.createTeam({ name: "Acme", slug: "acme" });
        expect(() => store.createTeam({ name: "Other", slug: "acme" })).toThrow(ConflictError);
      });

      it("creates users, finds them by email, refuses a taken email", () => {
        const user = store.createUser({ name: "Ada", email: "ada@a.test" });
        expect(store.getUser(user.id)).toEqual(user);
        expect(store.findUserByEmail("ada@a.test")).toEqual(user);
        expect(store.findUserByEmail("bo@a.test")).toBeUndefined();
        expect(() => store.createUser({ name: "Ada 2", email: "ada@a.test" })).toThrow(
          ConflictError,
        );
      });

      it("keeps memberships per team and replaces the role on a second set", () => {
        const { a, b, user } = twoTeams();
        expect(store.getMembership(a.id, user.id)).toEqual({
          teamId: a.id,
          userId: user.id,
          role: "owner",
        });
        expect(store.getMembership(b.id, user.id)).toBeUndefined();
        store.setMembership({ teamId: a.id, userId: user.id, role: "member" });
        expect(store.getMembership(a.id, user.id)?.role).toBe("member");
      });

      it("lists a team's memberships by user id, and no other team's", () => {
        const { a, b, user } = twoTeams();
        const second = store.createUser({ name: "Second", email: "second@example.com" });
        store.setMembership({ teamId: a.id, userId: second.id, role: "admin" });
        store.setMembership({ teamId: b.id, userId: second.id, role: "member" });
        expect(store.listMemberships(a.id)).toEqual([
          { teamId: a.id, userId: user.id, role: "owner" },
          { teamId: a.id, userId: second.id, role: "admin" },
        ]);
        expect(store.listMemberships(b.id)).toEqual([
          { teamId: b.id, userId: second.id, role: "member" },
        ]);
        expect(store.listMemberships(9_999)).toEqual([]);
      });

      it("removes one team's membership only, and says whether there was one", async () => {
        const { a, b, user } = twoTeams();
        await store.setMembership({ teamId: b.id, userId: user.id, role: "member" });
        const before = await store.changeMarker();
        expect(await store.removeMembership(a.id, user.id)).toBe(true);
        expect(await store.changeMarker()).not.toBe(before);
        expect(await store.getMembership(a.id, user.id)).toBeUndefined();
        expect(await store.listMemberships(a.id)).toEqual([]);
        expect(await store.getMembership(b.id, user.id)).toEqual({
          teamId: b.id,
          userId: user.id,
          role: "member",
        });
        expect(await store.getUser(user.id)).toEqual(user);
        expect(await store.removeMembership(a.id, user.id)).toBe(false);
      });

      it("refuses a membership in an unknown team or of an unknown user", () => {
        const { a, user } = twoTeams();
        expect(() =>
          store.setMembership({ teamId: 9_999, userId: user.id, role: "admin" }),
        ).toThrow(InvalidArgumentError);
        expect(() => store.setMembership({ teamId: a.id, userId: 9_999, role: "admin" })).toThrow(
          InvalidArgumentError,
        );
      });
    });

    describe("API tokens", () => {
      it("stores every field and finds the token by hash", () => {
        const { a, user } = twoTeams();
        const token = store.insertApiToken(tokenFields(a.id, user.id, "secret-1"));
        expect(token).toEqual({ id: token.id, ...tokenFields(a.id, user.id, "secret-1") });
        expect(store.findApiTokenByHash(hashSecret("secret-1"))).toEqual(token);
        expect(store.findApiTokenByHash(hashSecret("secret-2"))).toBeUndefined();
      });

      it("lists only the team's tokens", () => {
        const { a, b, user } = twoTeams();
        store.setMembership({ teamId: b.id, userId: user.id, role: "owner" });
        const tokenA = store.insertApiToken(tokenFields(a.id, user.id, "a"));
        const tokenB = store.insertApiToken(tokenFields(b.id, user.id, "b"));
        expect(store.listApiTokens(a.id).map((t) => t.id)).toEqual([tokenA.id]);
        expect(store.listApiTokens(b.id).map((t) => t.id)).toEqual([tokenB.id]);
      });

      it("revokes only within the team, and a second revoke keeps the first time", () => {
        const { a, b, user } = twoTeams();
        const token = store.insertApiToken(tokenFields(a.id, user.id, "a"));
        expect(store.revokeApiToken(b.id, token.id, 2_000)).toBeUndefined();
        expect(store.findApiTokenByHash(token.tokenHash)?.revokedAt).toBeNull();
        expect(store.revokeApiToken(a.id, token.id, 2_000)?.revokedAt).toBe(2_000);
        expect(store.revokeApiToken(a.id, token.id, 3_000)?.revokedAt).toBe(2_000);
        expect(store.findApiTokenByHash(token.tokenHash)?.revokedAt).toBe(2_000);
        expect(store.revokeApiToken(a.id, token.id + 1_000, 2_000)).toBeUndefined();
      });

      it("records the last use", () => {
        const { a, user } = twoTeams();
        const token = store.insertApiToken(tokenFields(a.id, user.id, "a"));
        store.touchApiToken(token.id, 4_242);
        expect(store.findApiTokenByHash(token.tokenHash)?.lastUsedAt).toBe(4_242);
      });

      it("refuses a token for an unknown team or user", () => {
        const { a, user } = twoTeams();
        expect(() => store.insertApiToken(tokenFields(9_999, user.id, "x"))).toThrow(
          InvalidArgumentError,
        );
        expect(() => store.insertApiToken(tokenFields(a.id, 9_999, "x"))).toThrow(
          InvalidArgumentError,
        );
      });
    });

    describe("budgets", () => {
      it("upserts by name within a team and isolates teams", () => {
        const { a, b } = twoTeams();
        const first = store.upsertBudget(a.id, { name: "LLM", originMaxConcurrent: 10 });
        const updated = store.upsertBudget(a.id, { name: "LLM", originMaxConcurrent: null });
        const other = store.upsertBudget(b.id, { name: "LLM", originMaxConcurrent: 3 });
        expect(updated).toEqual({ ...first, originMaxConcurrent: null });
        expect(other.id).not.toBe(first.id);
        expect(store.getBudget(a.id, first.id)).toEqual(updated);
        expect(store.getBudget(b.id, first.id)).toBeUndefined();
        expect(store.listBudgets(a.id)).toEqual([updated]);
        expect(store.listBudgets(b.id)).toEqual([other]);
        expect(store.listAllBudgets().map((budget) => budget.id)).toEqual([first.id, other.id]);
      });
    });

    describe("pools", () => {
      it("round-trips every field, with timestamps from the clock", () => {
        const { a } = twoTeams();
        const budget = store.upsertBudget(a.id, { name: "LLM", originMaxConcurrent: 10 });
        const input = poolInput({
          description: "chat",
          backend: "postgres",
          rpm: 600,
          adaptive: false,
          requireKey: false,
          allowAuthorizationHeader: true,
          credential: { header: "authorization", value: sealed },
          database: {
            connectionString: sealed,
            maxRows: 500,
            maxResultBytes: 65_536,
            statementTimeoutMs: 2_000,
          },
          originSigning: true,
          readMethods: ["POST", "QUERY"],
          readPaths: { POST: ["/v1/search", "/v1/embeddings"] },
          budgetId: budget.id,
          reservedConcurrent: 3,
        });
        const pool = store.upsertPool(a.id, input);
        const expected = {
          ...input,
          id: pool.id,
          teamId: a.id,
          createdAt: clock.now(),
          updatedAt: clock.now(),
        };
        expect(pool).toEqual(expected);
        expect(store.getPoolBySubdomain(a.id, "llm")).toEqual(expected);
        expect(store.findPoolBySubdomain("llm")).toEqual(expected);
      });

      it("updates a pool matched by subdomain, keeping id and createdAt", () => {
        const { a } = twoTeams();
        const created = store.upsertPool(a.id, poolInput());
        clock.advanceSync(5_000);
        const updated = store.upsertPool(a.id, poolInput({ maxConcurrent: 2, adaptive: false }));
        expect(updated.id).toBe(created.id);
        expect(updated.createdAt).toBe(created.createdAt);
        expect(updated.updatedAt).toBe(created.createdAt + 5_000);
        expect(updated.maxConcurrent).toBe(2);
        expect(updated.adaptive).toBe(false);
        expect(store.listPools(a.id)).toHaveLength(1);
      });

      it("refuses a subdomain taken by another team and leaves that pool alone", () => {
        const { a, b } = twoTeams();
        const pool = store.upsertPool(a.id, poolInput({ maxConcurrent: 5 }));
        expect(() => store.upsertPool(b.id, poolInput({ maxConcurrent: 1 }))).toThrow(
          ConflictError,
        );
        expect(store.findPoolBySubdomain("llm")).toEqual(pool);
        expect(store.listPools(b.id)).toEqual([]);
      });

      it("never returns another team's pools from team-scoped lookups", () => {
        const { a, b } = twoTeams();
        const poolA = store.upsertPool(a.id, poolInput({ subdomain: "alpha" }));
        const poolB = store.upsertPool(b.id, poolInput({ subdomain: "beta" }));
        expect(store.getPoolBySubdomain(b.id, "alpha")).toBeUndefined();
        expect(store.getPoolBySubdomain(a.id, "beta")).toBeUndefined();
        expect(store.listPools(a.id)).toEqual([poolA]);
        expect(store.listPools(b.id)).toEqual([poolB]);
        expect(store.listAllPools()).toEqual([poolA, poolB]);
      });

      it("refuses a budget of another team", () => {
        const { a, b } = twoTeams();
        const budgetB = store.upsertBudget(b.id, { name: "B", originMaxConcurrent: 1 });
        expect(() => store.upsertPool(a.id, poolInput({ budgetId: budgetB.id }))).toThrow(
          InvalidArgumentError,
        );
        expect(store.findPoolBySubdomain("llm")).toBeUndefined();
      });

      it("deletes only the team's own pool, with its keys, and frees the subdomain", () => {
        const { a, b } = twoTeams();
        const pool = store.upsertPool(a.id, poolInput());
        const key = store.insertPoolKey(keyFields(pool.id, "k1"));
        expect(store.deletePool(b.id, pool.id)).toBe(false);
        expect(store.findPoolBySubdomain("llm")).toBeDefined();
        expect(store.deletePool(a.id, pool.id)).toBe(true);
        expect(store.deletePool(a.id, pool.id)).toBe(false);
        expect(store.findPoolBySubdomain("llm")).toBeUndefined();
        expect(store.findPoolKeyByHash(key.keyHash)).toBeUndefined();
        expect(store.upsertPool(b.id, poolInput()).teamId).toBe(b.id);
      });

      it("atomically runs its body, keeps its writes and answers its value", () => {
        const { a } = twoTeams();
        const value = store.atomically(() => {
          store.upsertBudget(a.id, { name: "A", originMaxConcurrent: 4 });
          return store.upsertPool(a.id, poolInput()).subdomain;
        });
        expect(value).toBe("llm");
        expect(store.listBudgets(a.id).map((budget) => budget.name)).toEqual(["A"]);
        expect(store.getPoolBySubdomain(a.id, "llm")).toBeDefined();
      });

      it("deletes only the team's own budget, and none that still has pools", () => {
        const { a, b } = twoTeams();
        const budget = store.upsertBudget(a.id, { name: "A", originMaxConcurrent: 4 });
        const pool = store.upsertPool(a.id, poolInput({ budgetId: budget.id }));
        expect(store.deleteBudget(b.id, budget.id)).toBe(false);
        expect(() => store.deleteBudget(a.id, budget.id)).toThrow(
          'The budget "A" still has pools (llm)',
        );
        expect(store.getBudget(a.id, budget.id)).toEqual(budget);
        store.upsertPool(a.id, poolInput({ budgetId: null }));
        const before = store.changeMarker();
        expect(store.deleteBudget(a.id, budget.id)).toBe(true);
        expect(store.changeMarker()).not.toBe(before);
        expect(store.deleteBudget(a.id, budget.id)).toBe(false);
        expect(store.listBudgets(a.id)).toEqual([]);
        expect(store.getPoolBySubdomain(a.id, pool.subdomain)?.budgetId).toBeNull();
      });

      it("hands out copies: mutating a returned record does not change the store", () => {
        const { a } = twoTeams();
        const pool = store.upsertPool(a.id, poolInput({ readMethods: ["POST"] }));
        try {
          pool.readMethods.push("DELETE");
          pool.maxConcurrent = 999;
        } catch {
          // A frozen record is just as good.
        }
        const again = store.findPoolBySubdomain("llm");
        expect(again?.readMethods).toEqual(["POST"]);
        expect(again?.maxConcurrent).toBe(8);
      });
    });

    describe("pool keys", () => {
      it("stores every field and finds keys by pool and hash", () => {
        const { a } = twoTeams();
        const pool = store.upsertPool(a.id, poolInput());
        const key = store.insertPoolKey(keyFields(pool.id, "k1"));
        expect(key).toEqual({ id: key.id, ...keyFields(pool.id, "k1") });
        expect(store.getPoolKey(pool.id, key.id)).toEqual(key);
        expect(store.findPoolKeyByHash(hashSecret("k1"))).toEqual(key);
        expect(store.findPoolKeyByHash(hashSecret("k2"))).toBeUndefined();
        const plain = store.insertPoolKey({ ...keyFields(pool.id, "k2"), signingSecret: null });
        expect(store.getPoolKey(pool.id, plain.id)?.signingSecret).toBeNull();
        expect(store.listPoolKeys(pool.id).map((k) => k.id)).toEqual([key.id, plain.id]);
      });

      it("never returns a key through another pool", () => {
        const { a, b } = twoTeams();
        const poolA = store.upsertPool(a.id, poolInput({ subdomain: "alpha" }));
        const poolB = store.upsertPool(b.id, poolInput({ subdomain: "beta" }));
        const key = store.insertPoolKey(keyFields(poolA.id, "k1"));
        expect(store.getPoolKey(poolB.id, key.id)).toBeUndefined();
        expect(store.listPoolKeys(poolB.id)).toEqual([]);
        expect(store.revokePoolKey(poolB.id, key.id, 2_000)).toBeUndefined();
        expect(store.getPoolKey(poolA.id, key.id)?.revokedAt).toBeNull();
      });

      it("revokes once: a second revoke keeps the first time", () => {
        const { a } = twoTeams();
        const pool = store.upsertPool(a.id, poolInput());
        const key = store.insertPoolKey(keyFields(pool.id, "k1"));
        expect(store.revokePoolKey(pool.id, key.id, 2_000)?.revokedAt).toBe(2_000);
        expect(store.revokePoolKey(pool.id, key.id, 3_000)?.revokedAt).toBe(2_000);
        expect(store.findPoolKeyByHash(key.keyHash)?.revokedAt).toBe(2_000);
      });

      it("refuses a key for an unknown pool", () => {
        expect(() => store.insertPoolKey(keyFields(9_999, "k1"))).toThrow(InvalidArgumentError);
      });
    });

    describe("secrets at rest", () => {
      it("holds tokens and keys only as hashes, and credentials only sealed", () => {
        const catalog = new CatalogService({
          store,
          secretBox: new SecretBox(testSecretKey()),
          clock,
        });
        const { team, owner } = catalog.createTeamWithOwner({
          teamName: "Acme",
          slug: "acme",
          ownerName: "Ada",
          ownerEmail: "ada@acme.test",
        });
        const credential = "sk-live-upstream-credential-123456";
        store.upsertPool(
          team.id,
          poolInput({
            originSigning: true,
            credential: catalog.sealCredential("authorization", credential),
          }),
        );
        const databasePassword = "pg-read-role-password-987";
        store.upsertPool(
          team.id,
          poolInput({
            subdomain: "warehouse",
            backend: "postgres",
            database: catalog.sealDatabase(
              `postgres://reader:${databasePassword}@db.internal/app`,
              {
                maxRows: 10,
                maxResultBytes: 1_000,
                statementTimeoutMs: 1_000,
              },
            ),
          }),
        );
        const token = catalog.createApiToken({
          teamId: team.id,
          actorUserId: owner.id,
          name: "CI",
          abilities: ["keys:write"],
          lifetime: "1m",
        });
        const key = catalog.mintPoolKey({ teamId: team.id, subdomain: "llm" });
        const everything = JSON.stringify([
          store.listApiTokens(team.id),
          store.listAllPools(),
          store.listPoolKeys(key.key.poolId),
        ]);
        for (const secret of [
          token.plaintext,
          key.plaintext,
          key.signingSecret!,
          credential,
          databasePassword,
        ]) {
          expect(everything).not.toContain(secret);
        }
        expect(everything).toContain(hashSecret(token.plaintext));
        expect(everything).toContain(hashSecret(key.plaintext));
      });
    });

    describe("changeMarker", () => {
      it("changes on every kind of catalog write and not on reads", () => {
        const markers = new Set<number>();
        const step = (write: () => unknown) => {
          const before = store.changeMarker();
          write();
          const after = store.changeMarker();
          expect(after).not.toBe(before);
          markers.add(after);
        };
        let teamId = 0;
        let poolId = 0;
        let keyId = 0;
        let tokenId = 0;
        let userId = 0;
        step(() => {
          teamId = store.createTeam({ name: "A", slug: "a" }).id;
        });
        step(() => {
          userId = store.createUser({ name: "U", email: "u@a.test" }).id;
        });
        step(() => store.setMembership({ teamId, userId, role: "owner" }));
        step(() => {
          tokenId = store.insertApiToken(tokenFields(teamId, userId, "t")).id;
        });
        step(() => store.revokeApiToken(teamId, tokenId, 2_000));
        step(() => store.upsertBudget(teamId, { name: "B", originMaxConcurrent: 2 }));
        step(() => {
          poolId = store.upsertPool(teamId, poolInput()).id;
        });
        step(() => store.upsertPool(teamId, poolInput({ maxConcurrent: 1 })));
        step(() => {
          keyId = store.insertPoolKey(keyFields(poolId, "k")).id;
        });
        step(() => store.revokePoolKey(poolId, keyId, 2_000));
        step(() => store.deletePool(teamId, poolId));
        expect(markers.size).toBe(11);

        const settled = store.changeMarker();
        store.listAllPools();
        store.findTeamBySlug("a");
        store.listApiTokens(teamId);
        expect(store.changeMarker()).toBe(settled);
      });
    });
  });
}
