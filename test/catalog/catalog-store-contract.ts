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
const sealedRequest = { iv: "cnE=", tag: "cnQ=", data: "cmVxdWVzdA==" };

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
    requestSecret: sealedRequest,
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
    afterEach(async () => store.close());

    async function twoTeams() {
      const a = await store.createTeam({ name: "A", slug: "team-a" });
      const b = await store.createTeam({ name: "B", slug: "team-b" });
      const user = await store.createUser({ name: "Ada", email: "ada@a.test" });
      await store.setMembership({ teamId: a.id, userId: user.id, role: "owner" });
      return { a, b, user };
    }

    describe("teams, users, memberships", () => {
      it("creates and finds teams by id and slug", async () => {
        const team = await store.createTeam({ name: "Acme", slug: "acme" });
        expect(await store.getTeam(team.id)).toEqual({ id: team.id, name: "Acme", slug: "acme" });
        expect(await store.findTeamBySlug("acme")).toEqual(team);
        expect(await store.findTeamBySlug("other")).toBeUndefined();
        expect(await store.getTeam(team.id + 1000)).toBeUndefined();
      });

      it("lists every team by id", async () => {
        expect(await store.listTeams()).toEqual([]);
        const b = await store.createTeam({ name: "B", slug: "team-b" });
        const a = await store.createTeam({ name: "A", slug: "team-a" });
        expect(await store.listTeams()).toEqual([b, a]);
      });

      it("refuses a taken team slug with ConflictError", async () => {
        await store.createTeam({ name: "Acme", slug: "acme" });
        await expect(store.createTeam({ name: "Other", slug: "acme" })).rejects.toThrow(
          ConflictError,
        );
      });

      it("creates users, finds them by email, refuses a taken email", async () => {
        const user = await store.createUser({ name: "Ada", email: "ada@a.test" });
        expect(await store.getUser(user.id)).toEqual(user);
        expect(await store.findUserByEmail("ada@a.test")).toEqual(user);
        expect(await store.findUserByEmail("bo@a.test")).toBeUndefined();
        await expect(store.createUser({ name: "Ada 2", email: "ada@a.test" })).rejects.toThrow(
          ConflictError,
        );
      });

      it("keeps memberships per team and replaces the role on a second set", async () => {
        const { a, b, user } = await twoTeams();
        expect(await store.getMembership(a.id, user.id)).toEqual({
          teamId: a.id,
          userId: user.id,
          role: "owner",
        });
        expect(await store.getMembership(b.id, user.id)).toBeUndefined();
        await store.setMembership({ teamId: a.id, userId: user.id, role: "member" });
        expect((await store.getMembership(a.id, user.id))?.role).toBe("member");
      });

      it("lists a team's memberships by user id, and no other team's", async () => {
        const { a, b, user } = await twoTeams();
        const second = await store.createUser({ name: "Second", email: "second@example.com" });
        await store.setMembership({ teamId: a.id, userId: second.id, role: "admin" });
        await store.setMembership({ teamId: b.id, userId: second.id, role: "member" });
        expect(await store.listMemberships(a.id)).toEqual([
          { teamId: a.id, userId: user.id, role: "owner" },
          { teamId: a.id, userId: second.id, role: "admin" },
        ]);
        expect(await store.listMemberships(b.id)).toEqual([
          { teamId: b.id, userId: second.id, role: "member" },
        ]);
        expect(await store.listMemberships(9_999)).toEqual([]);
        expect(await store.listUserMemberships(second.id)).toEqual([
          { teamId: a.id, userId: second.id, role: "admin" },
          { teamId: b.id, userId: second.id, role: "member" },
        ]);
        expect(await store.listUserMemberships(9_999)).toEqual([]);
      });

      it("removes one team's membership only, and says whether there was one", async () => {
        const { a, b, user } = await twoTeams();
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

      it("refuses a membership in an unknown team or of an unknown user", async () => {
        const { a, user } = await twoTeams();
        await expect(
          store.setMembership({ teamId: 9_999, userId: user.id, role: "admin" }),
        ).rejects.toThrow(InvalidArgumentError);
        await expect(
          store.setMembership({ teamId: a.id, userId: 9_999, role: "admin" }),
        ).rejects.toThrow(InvalidArgumentError);
      });
    });

    describe("API tokens", () => {
      it("stores every field and finds the token by hash", async () => {
        const { a, user } = await twoTeams();
        const token = await store.insertApiToken(tokenFields(a.id, user.id, "secret-1"));
        expect(token).toEqual({ id: token.id, ...tokenFields(a.id, user.id, "secret-1") });
        expect(await store.findApiTokenByHash(hashSecret("secret-1"))).toEqual(token);
        expect(await store.findApiTokenByHash(hashSecret("secret-2"))).toBeUndefined();
      });

      it("lists only the team's tokens", async () => {
        const { a, b, user } = await twoTeams();
        await store.setMembership({ teamId: b.id, userId: user.id, role: "owner" });
        const tokenA = await store.insertApiToken(tokenFields(a.id, user.id, "a"));
        const tokenB = await store.insertApiToken(tokenFields(b.id, user.id, "b"));
        expect((await store.listApiTokens(a.id)).map((t) => t.id)).toEqual([tokenA.id]);
        expect((await store.listApiTokens(b.id)).map((t) => t.id)).toEqual([tokenB.id]);
      });

      it("revokes only within the team, and a second revoke keeps the first time", async () => {
        const { a, b, user } = await twoTeams();
        const token = await store.insertApiToken(tokenFields(a.id, user.id, "a"));
        expect(await store.revokeApiToken(b.id, token.id, 2_000)).toBeUndefined();
        expect((await store.findApiTokenByHash(token.tokenHash))?.revokedAt).toBeNull();
        expect((await store.revokeApiToken(a.id, token.id, 2_000))?.revokedAt).toBe(2_000);
        expect((await store.revokeApiToken(a.id, token.id, 3_000))?.revokedAt).toBe(2_000);
        expect((await store.findApiTokenByHash(token.tokenHash))?.revokedAt).toBe(2_000);
        expect(await store.revokeApiToken(a.id, token.id + 1_000, 2_000)).toBeUndefined();
      });

      it("records the last use", async () => {
        const { a, user } = await twoTeams();
        const token = await store.insertApiToken(tokenFields(a.id, user.id, "a"));
        await store.touchApiToken(token.id, 4_242);
        expect((await store.findApiTokenByHash(token.tokenHash))?.lastUsedAt).toBe(4_242);
      });

      it("refuses a token for an unknown team or user", async () => {
        const { a, user } = await twoTeams();
        await expect(store.insertApiToken(tokenFields(9_999, user.id, "x"))).rejects.toThrow(
          InvalidArgumentError,
        );
        await expect(store.insertApiToken(tokenFields(a.id, 9_999, "x"))).rejects.toThrow(
          InvalidArgumentError,
        );
      });
    });

    describe("budgets", () => {
      it("upserts by name within a team and isolates teams", async () => {
        const { a, b } = await twoTeams();
        const first = await store.upsertBudget(a.id, { name: "LLM", originMaxConcurrent: 10 });
        const updated = await store.upsertBudget(a.id, { name: "LLM", originMaxConcurrent: null });
        const other = await store.upsertBudget(b.id, { name: "LLM", originMaxConcurrent: 3 });
        expect(updated).toEqual({ ...first, originMaxConcurrent: null });
        expect(other.id).not.toBe(first.id);
        expect(await store.getBudget(a.id, first.id)).toEqual(updated);
        expect(await store.getBudget(b.id, first.id)).toBeUndefined();
        expect(await store.listBudgets(a.id)).toEqual([updated]);
        expect(await store.listBudgets(b.id)).toEqual([other]);
        expect((await store.listAllBudgets()).map((budget) => budget.id)).toEqual([
          first.id,
          other.id,
        ]);
      });

      it("renames a budget keeping its id and pools; another budget's name is a ConflictError", async () => {
        const { a, b } = await twoTeams();
        const llm = await store.upsertBudget(a.id, { name: "LLM", originMaxConcurrent: 10 });
        const search = await store.upsertBudget(a.id, { name: "Search", originMaxConcurrent: 2 });
        await store.upsertBudget(b.id, { name: "AI", originMaxConcurrent: 3 });
        const pool = await store.upsertPool(a.id, poolInput({ budgetId: llm.id }));
        const renamed = await store.renameBudget(a.id, llm.id, "AI");
        expect(renamed).toEqual({ ...llm, name: "AI" });
        expect(await store.getBudget(a.id, llm.id)).toEqual(renamed);
        expect((await store.getPoolBySubdomain(a.id, pool.subdomain))?.budgetId).toBe(llm.id);
        expect(await store.renameBudget(a.id, llm.id, "AI")).toEqual(renamed);
        await expect(store.renameBudget(a.id, llm.id, "Search")).rejects.toThrow(ConflictError);
        await expect(store.renameBudget(a.id, llm.id, "Search")).rejects.toThrow(
          'The team already has a budget named "Search".',
        );
        expect(await store.getBudget(a.id, search.id)).toEqual(search);
        expect(await store.getBudget(a.id, llm.id)).toEqual(renamed);
        // Another team's budget is not the team's to rename, and an unknown id is no budget.
        expect(await store.renameBudget(b.id, llm.id, "X")).toBeUndefined();
        expect(await store.renameBudget(a.id, 9_999, "X")).toBeUndefined();
        expect(await store.getBudget(a.id, llm.id)).toEqual(renamed);
      });
    });

    describe("pools", () => {
      it("round-trips every field, with timestamps from the clock", async () => {
        const { a } = await twoTeams();
        const budget = await store.upsertBudget(a.id, { name: "LLM", originMaxConcurrent: 10 });
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
          callerPolicies: {
            ipAllowlist: ["10.0.0.0/8", "2001:db8::/32"],
            hmac: { skewSeconds: 120 },
          },
          budgetId: budget.id,
          reservedConcurrent: 3,
        });
        const pool = await store.upsertPool(a.id, input);
        const expected = {
          ...input,
          id: pool.id,
          teamId: a.id,
          createdAt: clock.now(),
          updatedAt: clock.now(),
        };
        expect(pool).toEqual(expected);
        expect(await store.getPoolBySubdomain(a.id, "llm")).toEqual(expected);
        expect(await store.findPoolBySubdomain("llm")).toEqual(expected);
      });

      it("updates a pool matched by subdomain, keeping id and createdAt", async () => {
        const { a } = await twoTeams();
        const created = await store.upsertPool(a.id, poolInput());
        clock.advanceSync(5_000);
        const updated = await store.upsertPool(
          a.id,
          poolInput({ maxConcurrent: 2, adaptive: false }),
        );
        expect(updated.id).toBe(created.id);
        expect(updated.createdAt).toBe(created.createdAt);
        expect(updated.updatedAt).toBe(created.createdAt + 5_000);
        expect(updated.maxConcurrent).toBe(2);
        expect(updated.adaptive).toBe(false);
        expect(await store.listPools(a.id)).toHaveLength(1);
      });

      it("refuses a subdomain taken by another team and leaves that pool alone", async () => {
        const { a, b } = await twoTeams();
        const pool = await store.upsertPool(a.id, poolInput({ maxConcurrent: 5 }));
        await expect(store.upsertPool(b.id, poolInput({ maxConcurrent: 1 }))).rejects.toThrow(
          ConflictError,
        );
        expect(await store.findPoolBySubdomain("llm")).toEqual(pool);
        expect(await store.listPools(b.id)).toEqual([]);
      });

      it("never returns another team's pools from team-scoped lookups", async () => {
        const { a, b } = await twoTeams();
        const poolA = await store.upsertPool(a.id, poolInput({ subdomain: "alpha" }));
        const poolB = await store.upsertPool(b.id, poolInput({ subdomain: "beta" }));
        expect(await store.getPoolBySubdomain(b.id, "alpha")).toBeUndefined();
        expect(await store.getPoolBySubdomain(a.id, "beta")).toBeUndefined();
        expect(await store.listPools(a.id)).toEqual([poolA]);
        expect(await store.listPools(b.id)).toEqual([poolB]);
        expect(await store.listAllPools()).toEqual([poolA, poolB]);
      });

      it("refuses a budget of another team", async () => {
        const { a, b } = await twoTeams();
        const budgetB = await store.upsertBudget(b.id, { name: "B", originMaxConcurrent: 1 });
        await expect(store.upsertPool(a.id, poolInput({ budgetId: budgetB.id }))).rejects.toThrow(
          InvalidArgumentError,
        );
        expect(await store.findPoolBySubdomain("llm")).toBeUndefined();
      });

      it("deletes only the team's own pool, with its keys, and frees the subdomain", async () => {
        const { a, b } = await twoTeams();
        const pool = await store.upsertPool(a.id, poolInput());
        const key = await store.insertPoolKey(keyFields(pool.id, "k1"));
        expect(await store.deletePool(b.id, pool.id)).toBe(false);
        expect(await store.findPoolBySubdomain("llm")).toBeDefined();
        expect(await store.deletePool(a.id, pool.id)).toBe(true);
        expect(await store.deletePool(a.id, pool.id)).toBe(false);
        expect(await store.findPoolBySubdomain("llm")).toBeUndefined();
        expect(await store.findPoolKeyByHash(key.keyHash)).toBeUndefined();
        expect((await store.upsertPool(b.id, poolInput())).teamId).toBe(b.id);
      });

      it("atomically runs its body, keeps its writes and answers its value", async () => {
        const { a } = await twoTeams();
        const value = await store.atomically(async (tx) => {
          await tx.upsertBudget(a.id, { name: "A", originMaxConcurrent: 4 });
          return (await tx.upsertPool(a.id, poolInput())).subdomain;
        });
        expect(value).toBe("llm");
        expect((await store.listBudgets(a.id)).map((budget) => budget.name)).toEqual(["A"]);
        expect(await store.getPoolBySubdomain(a.id, "llm")).toBeDefined();
      });

      it("atomically keeps none of its writes when its body throws", async () => {
        const { a } = await twoTeams();
        const failing = store.atomically(async (tx) => {
          await tx.upsertBudget(a.id, { name: "A", originMaxConcurrent: 4 });
          await tx.upsertPool(a.id, poolInput());
          throw new Error("changed my mind");
        });
        await expect(failing).rejects.toThrow("changed my mind");
        expect(await store.listBudgets(a.id)).toEqual([]);
        expect(await store.findPoolBySubdomain("llm")).toBeUndefined();
        // The store still works after a rolled-back unit.
        expect((await store.upsertPool(a.id, poolInput())).subdomain).toBe("llm");
      });

      it("atomically never shows other calls half a unit, nor lets them join it", async () => {
        const { a } = await twoTeams();
        let release!: () => void;
        const paused = new Promise<void>((resolve) => {
          release = resolve;
        });
        let entered!: () => void;
        const inside = new Promise<void>((resolve) => {
          entered = resolve;
        });
        const unit = store.atomically(async (tx) => {
          await tx.upsertBudget(a.id, { name: "A", originMaxConcurrent: 4 });
          entered();
          await paused;
          await tx.upsertPool(a.id, poolInput());
        });
        await inside;
        // Read while the unit is open: all of it or none, never half (a budget without its
        // pool). In-process stores make the read wait for the unit; PostgreSQL answers from
        // the last commit.
        const outside = Promise.all([store.listBudgets(a.id), store.listPools(a.id)]);
        const write = store.upsertBudget(a.id, { name: "B", originMaxConcurrent: 1 });
        await Promise.race([outside, new Promise((resolve) => setTimeout(resolve, 50))]);
        release();
        await unit;
        const [budgets, pools] = await outside;
        expect(budgets.filter((budget) => budget.name === "A")).toHaveLength(pools.length);
        await write;
        expect((await store.listBudgets(a.id)).map((budget) => budget.name).sort()).toEqual([
          "A",
          "B",
        ]);
      });

      it("lets one of two units that read, check and then write the same pool win; the other fails", async () => {
        const { a } = await twoTeams();
        await store.upsertPool(a.id, poolInput());
        const signal = () => {
          let fire!: () => void;
          const fired = new Promise<void>((resolve) => {
            fire = resolve;
          });
          return { fire, fired };
        };
        const [readA, readB] = [signal(), signal()];
        // A dashboard save: read the pool, check it is as the form saw it, write it. Both units
        // read before either writes where the store lets them (PostgreSQL); in-process stores
        // run one unit after the other, so the wait for the other's read times out.
        const save = (description: string, mine: typeof readA, theirs: typeof readA) =>
          store.atomically(async (tx) => {
            const current = await tx.getPoolBySubdomain(a.id, "llm");
            mine.fire();
            await Promise.race([theirs.fired, new Promise((resolve) => setTimeout(resolve, 200))]);
            if (current?.description !== null) throw new ConflictError("changed since read");
            await tx.upsertPool(a.id, poolInput({ description }));
          });
        const results = await Promise.allSettled([
          save("a", readA, readB),
          save("b", readB, readA),
        ]);
        const won = results.flatMap((result, index) =>
          result.status === "fulfilled" ? [index === 0 ? "a" : "b"] : [],
        );
        expect(won).toHaveLength(1);
        const lost = results.find((result) => result.status === "rejected");
        expect((lost as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
        expect((await store.getPoolBySubdomain(a.id, "llm"))?.description).toBe(won[0]);
      });

      it("deletes only the team's own budget, and none that still has pools", async () => {
        const { a, b } = await twoTeams();
        const budget = await store.upsertBudget(a.id, { name: "A", originMaxConcurrent: 4 });
        const pool = await store.upsertPool(a.id, poolInput({ budgetId: budget.id }));
        expect(await store.deleteBudget(b.id, budget.id)).toBe(false);
        await expect(store.deleteBudget(a.id, budget.id)).rejects.toThrow(
          'The budget "A" still has pools (llm)',
        );
        expect(await store.getBudget(a.id, budget.id)).toEqual(budget);
        await store.upsertPool(a.id, poolInput({ budgetId: null }));
        const before = await store.changeMarker();
        expect(await store.deleteBudget(a.id, budget.id)).toBe(true);
        expect(await store.changeMarker()).not.toBe(before);
        expect(await store.deleteBudget(a.id, budget.id)).toBe(false);
        expect(await store.listBudgets(a.id)).toEqual([]);
        expect((await store.getPoolBySubdomain(a.id, pool.subdomain))?.budgetId).toBeNull();
      });

      it("hands out copies: mutating a returned record does not change the store", async () => {
        const { a } = await twoTeams();
        const pool = await store.upsertPool(a.id, poolInput({ readMethods: ["POST"] }));
        try {
          pool.readMethods.push("DELETE");
          pool.maxConcurrent = 999;
        } catch {
          // A frozen record is just as good.
        }
        const again = await store.findPoolBySubdomain("llm");
        expect(again?.readMethods).toEqual(["POST"]);
        expect(again?.maxConcurrent).toBe(8);
      });
    });

    describe("pool keys", () => {
      it("stores every field and finds keys by pool and hash", async () => {
        const { a } = await twoTeams();
        const pool = await store.upsertPool(a.id, poolInput());
        const key = await store.insertPoolKey(keyFields(pool.id, "k1"));
        expect(key).toEqual({ id: key.id, ...keyFields(pool.id, "k1") });
        expect(await store.getPoolKey(pool.id, key.id)).toEqual(key);
        expect(await store.findPoolKeyByHash(hashSecret("k1"))).toEqual(key);
        expect(await store.findPoolKeyByHash(hashSecret("k2"))).toBeUndefined();
        const plain = await store.insertPoolKey({
          ...keyFields(pool.id, "k2"),
          signingSecret: null,
          requestSecret: null,
        });
        const stored = await store.getPoolKey(pool.id, plain.id);
        expect(stored?.signingSecret).toBeNull();
        expect(stored?.requestSecret).toBeNull();
        expect((await store.listPoolKeys(pool.id)).map((k) => k.id)).toEqual([key.id, plain.id]);
      });

      it("never returns a key through another pool", async () => {
        const { a, b } = await twoTeams();
        const poolA = await store.upsertPool(a.id, poolInput({ subdomain: "alpha" }));
        const poolB = await store.upsertPool(b.id, poolInput({ subdomain: "beta" }));
        const key = await store.insertPoolKey(keyFields(poolA.id, "k1"));
        expect(await store.getPoolKey(poolB.id, key.id)).toBeUndefined();
        expect(await store.listPoolKeys(poolB.id)).toEqual([]);
        expect(await store.revokePoolKey(poolB.id, key.id, 2_000)).toBeUndefined();
        expect((await store.getPoolKey(poolA.id, key.id))?.revokedAt).toBeNull();
      });

      it("revokes once: a second revoke keeps the first time", async () => {
        const { a } = await twoTeams();
        const pool = await store.upsertPool(a.id, poolInput());
        const key = await store.insertPoolKey(keyFields(pool.id, "k1"));
        expect((await store.revokePoolKey(pool.id, key.id, 2_000))?.revokedAt).toBe(2_000);
        expect((await store.revokePoolKey(pool.id, key.id, 3_000))?.revokedAt).toBe(2_000);
        expect((await store.findPoolKeyByHash(key.keyHash))?.revokedAt).toBe(2_000);
      });

      it("refuses a key for an unknown pool", async () => {
        await expect(store.insertPoolKey(keyFields(9_999, "k1"))).rejects.toThrow(
          InvalidArgumentError,
        );
      });
    });

    describe("secrets at rest", () => {
      it("holds tokens and keys only as hashes, and credentials only sealed", async () => {
        const catalog = new CatalogService({
          store,
          secretBox: new SecretBox(testSecretKey()),
          clock,
        });
        const { team, owner } = await catalog.createTeamWithOwner({
          teamName: "Acme",
          slug: "acme",
          ownerName: "Ada",
          ownerEmail: "ada@acme.test",
        });
        const credential = "sk-live-upstream-credential-123456";
        await store.upsertPool(
          team.id,
          poolInput({
            originSigning: true,
            credential: catalog.sealCredential("authorization", credential),
          }),
        );
        const databasePassword = "pg-read-role-password-987";
        await store.upsertPool(
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
        const token = await catalog.createApiToken({
          teamId: team.id,
          actorUserId: owner.id,
          name: "CI",
          abilities: ["keys:write"],
          lifetime: "1m",
        });
        const key = await catalog.mintPoolKey({ teamId: team.id, subdomain: "llm" });
        const everything = JSON.stringify([
          await store.listApiTokens(team.id),
          await store.listAllPools(),
          await store.listPoolKeys(key.key.poolId),
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
      it("changes on every kind of catalog write and not on reads", async () => {
        const markers = new Set<number>();
        const step = async (write: () => Promise<unknown>) => {
          const before = await store.changeMarker();
          await write();
          const after = await store.changeMarker();
          expect(after).not.toBe(before);
          markers.add(after);
        };
        let teamId = 0;
        let poolId = 0;
        let keyId = 0;
        let tokenId = 0;
        let userId = 0;
        await step(async () => {
          teamId = (await store.createTeam({ name: "A", slug: "a" })).id;
        });
        await step(async () => {
          userId = (await store.createUser({ name: "U", email: "u@a.test" })).id;
        });
        await step(() => store.setMembership({ teamId, userId, role: "owner" }));
        await step(async () => {
          tokenId = (await store.insertApiToken(tokenFields(teamId, userId, "t"))).id;
        });
        await step(() => store.revokeApiToken(teamId, tokenId, 2_000));
        await step(() => store.upsertBudget(teamId, { name: "B", originMaxConcurrent: 2 }));
        await step(async () => {
          poolId = (await store.upsertPool(teamId, poolInput())).id;
        });
        await step(() => store.upsertPool(teamId, poolInput({ maxConcurrent: 1 })));
        await step(async () => {
          keyId = (await store.insertPoolKey(keyFields(poolId, "k"))).id;
        });
        await step(() => store.revokePoolKey(poolId, keyId, 2_000));
        await step(() => store.deletePool(teamId, poolId));
        expect(markers.size).toBe(11);

        const settled = await store.changeMarker();
        await store.listAllPools();
        await store.findTeamBySlug("a");
        await store.listApiTokens(teamId);
        expect(await store.changeMarker()).toBe(settled);
      });
    });
  });
}
