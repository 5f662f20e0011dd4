import { describe, expect, it } from "vitest";
import { hashSecret } from "../../src/catalog/secrets.js";
import type { TokenLifetime } from "../../src/catalog/types.js";
import { ForbiddenError, InvalidArgumentError, UnauthorizedError } from "../../src/errors.js";
import { catalogWithTeam } from "./service-fixture.js";

async function fixture() {
  const context = await catalogWithTeam();
  const create = (lifetime: TokenLifetime = "1m", actorUserId = context.owner.id) =>
    context.catalog.createApiToken({
      teamId: context.team.id,
      actorUserId,
      name: "CI",
      abilities: ["pools:read", "budgets:read"],
      lifetime,
    });
  return { ...context, create };
}

async function authError(run: () => Promise<unknown>): Promise<UnauthorizedError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(UnauthorizedError);
    return error as UnauthorizedError;
  }
  throw new Error("expected UnauthorizedError");
}

describe("API tokens", () => {
  it("returns the plaintext once and stores only its hash", async () => {
    const { create, store, team } = await fixture();
    const { token, plaintext } = await create();
    expect(plaintext).toMatch(/^slc_tok_[A-Za-z0-9_-]{43}$/);
    expect(token.tokenHash).toBe(hashSecret(plaintext));
    expect(JSON.stringify(await store.listApiTokens(team.id))).not.toContain(plaintext);
  });

  it("expires 1, 6 or 12 calendar months after creation (UTC, day clamped)", async () => {
    const { create } = await fixture();
    expect((await create("1m")).token.expiresAt).toBe(Date.UTC(2025, 1, 28, 10));
    expect((await create("6m")).token.expiresAt).toBe(Date.UTC(2025, 6, 31, 10));
    expect((await create("1y")).token.expiresAt).toBe(Date.UTC(2026, 0, 31, 10));
  });

  it("authenticates until the expiry instant, not at it", async () => {
    const { create, catalog, clock } = await fixture();
    const { token, plaintext } = await create("1m");
    await clock.advance(token.expiresAt - clock.now() - 1);
    expect((await catalog.authenticateApiToken(plaintext)).token.id).toBe(token.id);
    await clock.advance(1);
    expect((await authError(() => catalog.authenticateApiToken(plaintext))).message).toMatch(
      /expired/,
    );
  });

  it("authenticates as the creator within the team, with the token's abilities", async () => {
    const { create, catalog, team, admin } = await fixture();
    const { plaintext } = await create("1y", admin.id);
    const identity = await catalog.authenticateApiToken(plaintext);
    expect(identity.user).toEqual(admin);
    expect(identity.team).toEqual(team);
    expect(identity.abilities).toEqual(["budgets:read", "pools:read"]);
  });

  it("lets owners and admins create and revoke tokens, never members or outsiders", async () => {
    const { create, catalog, team, admin, member } = await fixture();
    expect((await create("1m", admin.id)).token.userId).toBe(admin.id);
    await expect(create("1m", member.id)).rejects.toThrow(ForbiddenError);
    await expect(create("1m", 9_999)).rejects.toThrow(ForbiddenError);
    const { token } = await create();
    await expect(
      catalog.revokeApiToken({ teamId: team.id, actorUserId: member.id, tokenId: token.id }),
    ).rejects.toThrow(ForbiddenError);
    expect(
      (await catalog.revokeApiToken({ teamId: team.id, actorUserId: admin.id, tokenId: token.id }))
        ?.revokedAt,
    ).not.toBeNull();
  });

  it("refuses a member's token creation before looking at the body", async () => {
    const { catalog, team, member } = await fixture();
    await expect(
      catalog.createApiToken({
        teamId: team.id,
        actorUserId: member.id,
        name: "",
        abilities: ["nope"],
        lifetime: "2y" as never,
      }),
    ).rejects.toThrow(ForbiddenError);
  });

  it("validates name, abilities and lifetime, reporting each field", async () => {
    const { catalog, team, owner } = await fixture();
    try {
      await catalog.createApiToken({
        teamId: team.id,
        actorUserId: owner.id,
        name: " ",
        abilities: ["pools:read", "pools:delete"],
        lifetime: "2y" as never,
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).issues).toEqual([
        "name: Required.",
        'abilities: Unknown ability "pools:delete"; the abilities are budgets:read, pools:read, pools:write, keys:write, metrics:read.',
        "lifetime: Must be one of 1m, 6m, 1y.",
      ]);
    }
    const base = { teamId: team.id, actorUserId: owner.id, name: "x", lifetime: "1m" as const };
    await expect(catalog.createApiToken({ ...base, abilities: [] })).rejects.toThrow(
      InvalidArgumentError,
    );
    const deduped = await catalog.createApiToken({
      ...base,
      abilities: ["metrics:read", "budgets:read", "metrics:read"],
    });
    expect(deduped.token.abilities).toEqual(["budgets:read", "metrics:read"]);
  });

  it("refuses missing, malformed, unknown and revoked tokens without echoing them", async () => {
    const { create, catalog, team, owner } = await fixture();
    expect((await authError(() => catalog.authenticateApiToken(undefined))).message).toMatch(
      /Missing/,
    );
    expect((await authError(() => catalog.authenticateApiToken(""))).message).toMatch(/Missing/);
    const malformed = "slc_tok_short-and-wrong";
    expect((await authError(() => catalog.authenticateApiToken(malformed))).message).not.toContain(
      malformed,
    );
    const unknown = `slc_tok_${"A".repeat(43)}`;
    expect((await authError(() => catalog.authenticateApiToken(unknown))).message).not.toContain(
      unknown,
    );
    const { token, plaintext } = await create();
    await catalog.revokeApiToken({ teamId: team.id, actorUserId: owner.id, tokenId: token.id });
    const revoked = await authError(() => catalog.authenticateApiToken(plaintext));
    expect(revoked.message).toMatch(/revoked/);
    expect(revoked.message).not.toContain(plaintext);
    const poolKeyShaped = `slc_key_${plaintext.slice(8)}`;
    await expect(catalog.authenticateApiToken(poolKeyShaped)).rejects.toThrow(UnauthorizedError);
  });

  it("records use at most once a minute", async () => {
    const { create, catalog, store, clock, team } = await fixture();
    const { plaintext } = await create();
    const first = (await catalog.authenticateApiToken(plaintext)).token;
    expect(await catalog.touchApiToken(first)).toBe(true);
    expect((await store.listApiTokens(team.id))[0]?.lastUsedAt).toBe(clock.now());
    await clock.advance(59_999);
    expect(await catalog.touchApiToken((await catalog.authenticateApiToken(plaintext)).token)).toBe(
      false,
    );
    await clock.advance(1);
    expect(await catalog.touchApiToken((await catalog.authenticateApiToken(plaintext)).token)).toBe(
      true,
    );
    expect((await store.listApiTokens(team.id))[0]?.lastUsedAt).toBe(clock.now());
  });
});
