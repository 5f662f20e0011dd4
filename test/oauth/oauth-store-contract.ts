import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OAuthGrantRecord, OAuthStore } from "../../adapters/oauth/types.js";

/** A store to test, with a team and a user it may refer to (SQLite checks references). */
export interface OAuthStoreFixture {
  store: OAuthStore;
  teamId: number;
  userId: number;
  close(): void;
}

/**
 * The behaviour every OAuthStore must have. Run it from each implementation's test file.
 */
export function describeOAuthStoreContract(
  name: string,
  factory: () => OAuthStoreFixture | Promise<OAuthStoreFixture>,
): void {
  describe(`OAuthStore contract: ${name}`, () => {
    let fixture: OAuthStoreFixture;
    let store: OAuthStore;

    beforeEach(async () => {
      fixture = await factory();
      store = fixture.store;
    });
    afterEach(() => fixture.close());

    function grantFields(clientId = "client-1"): Omit<OAuthGrantRecord, "id"> {
      return {
        userId: fixture.userId,
        teamId: fixture.teamId,
        clientId,
        clientName: "Inspector",
        redirectHost: "127.0.0.1",
        scopes: ["pools:read", "metrics:read"],
        resource: "http://localhost:8080/mcp",
        createdAt: 1_000,
        lastUsedAt: null,
        revokedAt: null,
      };
    }

    function code(grantId: number, codeHash = "c".repeat(64)) {
      return {
        codeHash,
        grantId,
        clientId: "client-1",
        redirectUri: "http://127.0.0.1:5000/cb",
        codeChallenge: "x".repeat(43),
        expiresAt: 61_000,
        usedAt: null,
      };
    }

    function token(grantId: number, tokenHash: string, kind: "access" | "refresh" = "refresh") {
      return {
        tokenHash,
        kind,
        grantId,
        scopes: ["pools:read" as const],
        expiresAt: 5_000,
        usedAt: null,
      };
    }

    it("stores DCR clients and finds them by id", async () => {
      await store.insertClient({
        clientId: "c1",
        clientName: "VS Code",
        redirectUris: ["http://127.0.0.1:33418/cb"],
        createdAt: 5,
      });
      expect(await store.getClient("c1")).toEqual({
        clientId: "c1",
        clientName: "VS Code",
        redirectUris: ["http://127.0.0.1:33418/cb"],
        createdAt: 5,
      });
      expect(await store.getClient("c2")).toBeUndefined();
    });

    it("prunes registered clients older than the cutoff that no grant names", async () => {
      const client = (clientId: string, createdAt: number) =>
        store.insertClient({
          clientId,
          clientName: "App",
          redirectUris: ["http://127.0.0.1/cb"],
          createdAt,
        });
      await client("unused-old", 10);
      await client("used-old", 10);
      await client("revoked-old", 10);
      await client("unused-new", 500);
      await store.insertGrant(grantFields("used-old"));
      const revoked = await store.insertGrant(grantFields("revoked-old"));
      await store.revokeGrant(revoked.id, 20);
      expect(await store.pruneUnusedClients(100)).toBe(1);
      expect(await store.getClient("unused-old")).toBeUndefined();
      for (const kept of ["used-old", "revoked-old", "unused-new"]) {
        expect(await store.getClient(kept)).toBeDefined();
      }
    });

    it("lists a user's live grants newest first, and only theirs", async () => {
      const first = await store.insertGrant(grantFields("a"));
      const second = await store.insertGrant(grantFields("b"));
      expect(second.id).not.toBe(first.id);
      expect(await store.getGrant(first.id)).toEqual(first);
      const listed = await store.listGrants(fixture.teamId, fixture.userId);
      expect(listed.map((grant) => grant.clientId)).toEqual(["b", "a"]);
      expect(await store.listGrants(fixture.teamId + 1000, fixture.userId)).toEqual([]);
      await store.touchGrant(first.id, 7_000);
      expect((await store.getGrant(first.id))?.lastUsedAt).toBe(7_000);
    });

    it("uses a code once: the replay sees when it was used", async () => {
      const grant = await store.insertGrant(grantFields());
      await store.insertCode(code(grant.id));
      expect((await store.useCode("c".repeat(64), 2_000))?.usedAt).toBeNull();
      const replay = await store.useCode("c".repeat(64), 3_000);
      expect(replay?.usedAt).toBe(2_000);
      expect(replay?.redirectUri).toBe("http://127.0.0.1:5000/cb");
      expect(await store.useCode("d".repeat(64), 3_000)).toBeUndefined();
    });

    it("uses a token once, for the first caller only", async () => {
      const grant = await store.insertGrant(grantFields());
      await store.insertToken(token(grant.id, "r1"));
      const [a, b] = await Promise.all([store.useToken("r1", 10), store.useToken("r1", 11)]);
      expect([a, b].sort()).toEqual([false, true]);
      expect((await store.findToken("r1"))?.usedAt).toBe(10);
      expect(await store.useToken("nope", 12)).toBe(false);
    });

    it("revoking a grant deletes its codes and tokens, once", async () => {
      const grant = await store.insertGrant(grantFields());
      const other = await store.insertGrant(grantFields("other"));
      await store.insertCode(code(grant.id));
      await store.insertToken(token(grant.id, "a1", "access"));
      await store.insertToken(token(other.id, "a2", "access"));
      expect(await store.revokeGrant(grant.id, 9_000)).toBe(true);
      expect(await store.revokeGrant(grant.id, 9_500)).toBe(false);
      expect((await store.getGrant(grant.id))?.revokedAt).toBe(9_000);
      expect(await store.findToken("a1")).toBeUndefined();
      expect(await store.useCode("c".repeat(64), 9_000)).toBeUndefined();
      expect(await store.findToken("a2")).toEqual(token(other.id, "a2", "access"));
      expect((await store.listGrants(fixture.teamId, fixture.userId)).map((g) => g.id)).toEqual([
        other.id,
      ]);
      expect(await store.revokeGrant(424_242, 1)).toBe(false);
    });

    it("prunes expired codes and tokens only", async () => {
      const grant = await store.insertGrant(grantFields());
      await store.insertCode(code(grant.id));
      await store.insertToken(token(grant.id, "old"));
      await store.insertToken({ ...token(grant.id, "new"), expiresAt: 90_000 });
      expect(await store.pruneExpired(70_000)).toBe(2);
      expect(await store.findToken("old")).toBeUndefined();
      expect(await store.findToken("new")).toBeDefined();
    });

    it("prunes grants older than the cutoff that no code or token names", async () => {
      const grant = async (clientId: string, createdAt = 1_000) =>
        (await store.insertGrant({ ...grantFields(clientId), createdAt })).id;
      const unexchanged = await grant("code-expired-unused");
      await store.insertCode(code(unexchanged, "u".repeat(64)));
      const inUse = await grant("refresh-token-live");
      await store.insertToken({ ...token(inUse, "live"), expiresAt: 90_000 });
      const codePending = await grant("code-live");
      await store.insertCode({ ...code(codePending, "p".repeat(64)), expiresAt: 90_000 });
      const revoked = await grant("revoked");
      await store.insertToken({ ...token(revoked, "cut"), expiresAt: 90_000 });
      await store.revokeGrant(revoked, 2_000);
      const young = await grant("consent-on-its-way", 60_000);

      await store.pruneExpired(70_000);
      expect(await store.pruneDeadGrants(50_000)).toBe(2);
      expect(await store.getGrant(unexchanged)).toBeUndefined();
      expect(await store.getGrant(revoked)).toBeUndefined();
      for (const kept of [inUse, codePending, young]) {
        expect(await store.getGrant(kept)).toBeDefined();
      }
      expect((await store.listGrants(fixture.teamId, fixture.userId)).map((g) => g.id)).toEqual([
        young,
        codePending,
        inUse,
      ]);
    });
  });
}
