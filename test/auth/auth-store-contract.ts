import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AuthStore, SessionRecord } from "../../src/auth/types.js";
import type { CatalogStore } from "../../src/catalog/types.js";

export type AuthStoreFactory = () => Promise<{
  store: AuthStore;
  catalog: CatalogStore;
  /** Ends what the factory opened (a database connection pool). */
  close?: () => Promise<void>;
}>;

/**
 * The behaviour every AuthStore must have; run from each implementation's test file with a
 * factory giving the store and the catalog store its users and teams live in.
 */
export function describeAuthStoreContract(name: string, factory: AuthStoreFactory): void {
  describe(`AuthStore contract: ${name}`, () => {
    let store: AuthStore;
    let userId: number;
    let otherUserId: number;
    let teamId: number;
    let otherTeamId: number;
    let close: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      const made = await factory();
      store = made.store;
      close = made.close;
      const catalog = made.catalog;
      teamId = (await catalog.createTeam({ name: "A", slug: "team-a" })).id;
      otherTeamId = (await catalog.createTeam({ name: "B", slug: "team-b" })).id;
      userId = (await catalog.createUser({ name: "Ada", email: "ada@a.test" })).id;
      otherUserId = (await catalog.createUser({ name: "Bo", email: "bo@a.test" })).id;
    });
    afterEach(() => close?.());

    function session(idHash: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
      return {
        idHash,
        userId,
        teamId,
        createdAt: 1_000,
        lastSeenAt: 1_000,
        expiresAt: 9_000,
        ...overrides,
      };
    }

    it("stores and replaces password hashes per user", async () => {
      expect(await store.getPasswordHash(userId)).toBeUndefined();
      await store.setPasswordHash(userId, "scrypt$1", 1_000);
      await store.setPasswordHash(userId, "scrypt$2", 2_000);
      expect(await store.getPasswordHash(userId)).toBe("scrypt$2");
      expect(await store.getPasswordHash(otherUserId)).toBeUndefined();
    });

    it("finds, touches and deletes sessions by id hash", async () => {
      await store.insertSession(session("a".repeat(64)));
      expect(await store.findSession("a".repeat(64))).toEqual(session("a".repeat(64)));
      expect(await store.findSession("b".repeat(64))).toBeUndefined();
      await store.touchSession("a".repeat(64), 5_000);
      expect((await store.findSession("a".repeat(64)))?.lastSeenAt).toBe(5_000);
      expect(await store.deleteSession("a".repeat(64))).toBe(true);
      expect(await store.deleteSession("a".repeat(64))).toBe(false);
      expect(await store.findSession("a".repeat(64))).toBeUndefined();
    });

    it("deletes a user's sessions in one team or in all, and nobody else's", async () => {
      await store.insertSession(session("1".repeat(64)));
      await store.insertSession(session("2".repeat(64), { teamId: otherTeamId }));
      await store.insertSession(session("3".repeat(64), { userId: otherUserId }));
      expect(await store.deleteUserSessions(userId, teamId)).toBe(1);
      expect(await store.findSession("2".repeat(64))).toBeDefined();
      await store.insertSession(session("4".repeat(64)));
      expect(await store.deleteUserSessions(userId)).toBe(2);
      expect(await store.findSession("3".repeat(64))).toBeDefined();
    });

    it("hands out a sign-in link once, and never after it expired", async () => {
      const link = {
        tokenHash: "c".repeat(64),
        userId,
        teamId,
        createdAt: 1_000,
        expiresAt: 2_000,
      };
      await store.insertSignInLink(link);
      const [first, second] = await Promise.all([
        store.consumeSignInLink(link.tokenHash, 1_500),
        store.consumeSignInLink(link.tokenHash, 1_500),
      ]);
      expect([first, second].filter(Boolean)).toEqual([link]);
      await store.insertSignInLink({ ...link, tokenHash: "d".repeat(64) });
      expect(await store.consumeSignInLink("d".repeat(64), 2_000)).toBeUndefined();
      expect(await store.consumeSignInLink("d".repeat(64), 1_000)).toBeUndefined();
    });

    it("counts failures in a fixed window per key, says when it ends, and clears them", async () => {
      expect(await store.failures("account:ada", 0, 100)).toEqual({ count: 0, endsAt: 0 });
      expect(await store.recordFailure("account:ada", 0, 100)).toBe(1);
      expect(await store.recordFailure("account:ada", 50, 100)).toBe(2);
      expect(await store.recordFailure("address:1.2.3.4", 50, 100)).toBe(1);
      expect(await store.failures("account:ada", 99, 100)).toEqual({ count: 2, endsAt: 100 });
      expect((await store.failures("account:ada", 100, 100)).count).toBe(0);
      expect(await store.recordFailure("account:ada", 100, 100)).toBe(1);
      expect(await store.failures("account:ada", 120, 100)).toEqual({ count: 1, endsAt: 200 });
      await store.clearFailures("account:ada");
      expect((await store.failures("account:ada", 100, 100)).count).toBe(0);
      expect(await store.failures("address:1.2.3.4", 60, 100)).toEqual({ count: 1, endsAt: 150 });
    });

    it("counts every failure when several are recorded at once (servers sharing the store)", async () => {
      const counts = await Promise.all(
        Array.from({ length: 12 }, () => store.recordFailure("account:ada", 10, 100)),
      );
      expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, n) => n + 1));
      expect(await store.failures("account:ada", 20, 100)).toEqual({ count: 12, endsAt: 110 });
    });

    it("deletes what can no longer be used, and only that", async () => {
      const limits = { idleMs: 1_000, failureWindowMs: 100 };
      await store.insertSession(session("1".repeat(64), { expiresAt: 5_000, lastSeenAt: 4_500 }));
      await store.insertSession(session("2".repeat(64), { lastSeenAt: 3_000 })); // idle
      await store.insertSession(session("3".repeat(64), { expiresAt: 4_000 })); // past its end
      const link = { userId, teamId, createdAt: 1_000 };
      await store.insertSignInLink({ ...link, tokenHash: "a".repeat(64), expiresAt: 4_001 });
      await store.insertSignInLink({ ...link, tokenHash: "b".repeat(64), expiresAt: 4_000 });
      await store.insertSetupToken({
        tokenHash: "c".repeat(64),
        createdAt: 1_000,
        expiresAt: 4_001,
      });
      await store.insertSetupToken({
        tokenHash: "d".repeat(64),
        createdAt: 1_000,
        expiresAt: 3_000,
      });
      await store.recordFailure("account:live", 3_950, 100);
      await store.recordFailure("account:over", 3_900, 100);

      expect(await store.deleteExpired(4_000, limits)).toBe(5);
      expect(await store.findSession("1".repeat(64))).toBeDefined();
      expect(await store.findSession("2".repeat(64))).toBeUndefined();
      expect(await store.findSession("3".repeat(64))).toBeUndefined();
      expect(await store.consumeSignInLink("a".repeat(64), 3_500)).toBeDefined();
      expect(await store.consumeSignInLink("b".repeat(64), 3_500)).toBeUndefined();
      expect(await store.findSetupToken("c".repeat(64), 3_500)).toBeDefined();
      expect(await store.findSetupToken("d".repeat(64), 2_500)).toBeUndefined();
      expect((await store.failures("account:live", 4_000, 100)).count).toBe(1);
      // Gone, not merely out of its window: a window read as of before shows nothing either.
      expect((await store.failures("account:over", 3_950, 100)).count).toBe(0);
      expect(await store.deleteExpired(4_000, limits)).toBe(0);
    });

    it("keeps setup tokens until one is used, they expire or all are deleted", async () => {
      const token = { tokenHash: "e".repeat(64), createdAt: 1_000, expiresAt: 2_000 };
      await store.insertSetupToken(token);
      expect(await store.findSetupToken(token.tokenHash, 1_500)).toEqual(token);
      expect(await store.findSetupToken(token.tokenHash, 2_000)).toBeUndefined();
      expect(await store.findSetupToken("f".repeat(64), 1_500)).toBeUndefined();
      const [first, second] = await Promise.all([
        store.consumeSetupToken(token.tokenHash, 1_500),
        store.consumeSetupToken(token.tokenHash, 1_500),
      ]);
      expect([first, second].filter(Boolean)).toEqual([token]);
      expect(await store.findSetupToken(token.tokenHash, 1_500)).toBeUndefined();
      await store.insertSetupToken(token);
      expect(await store.consumeSetupToken(token.tokenHash, 2_000)).toBeUndefined();
      // Two setups racing with different tokens: one wins, and no token is left.
      const other = { ...token, tokenHash: "a".repeat(64) };
      await store.insertSetupToken(token);
      await store.insertSetupToken(other);
      const raced = await Promise.all([
        store.consumeSetupToken(token.tokenHash, 1_500),
        store.consumeSetupToken(other.tokenHash, 1_500),
      ]);
      expect(raced.filter(Boolean)).toHaveLength(1);
      expect(await store.findSetupToken(token.tokenHash, 1_500)).toBeUndefined();
      expect(await store.findSetupToken(other.tokenHash, 1_500)).toBeUndefined();
      await store.insertSetupToken(token);
      await store.insertSetupToken({ ...token, tokenHash: "f".repeat(64) });
      await store.deleteSetupTokens();
      expect(await store.findSetupToken(token.tokenHash, 1_500)).toBeUndefined();
      expect(await store.findSetupToken("f".repeat(64), 1_500)).toBeUndefined();
    });
  });
}
