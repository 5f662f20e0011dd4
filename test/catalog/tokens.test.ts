import { describe, expect, it } from "vitest";
import { hashSecret } from "../../src/catalog/secrets.js";
import type { TokenLifetime } from "../../src/catalog/types.js";
import { ForbiddenError, InvalidArgumentError, UnauthorizedError } from "../../src/errors.js";
import { catalogWithTeam } from "./service-fixture.js";

function fixture() {
  const context = catalogWithTeam();
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

function authError(run: () => unknown): UnauthorizedError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UnauthorizedError);
    return error as UnauthorizedError;
  }
  throw new Error("expected UnauthorizedError");
}

describe("API tokens", () => {
  it("returns the plaintext once and stores only its hash", () => {
    const { create, store, team } = fixture();
    const { token, plaintext } = create();
    expect(plaintext).toMatch(/^slc_tok_[A-Za-z0-9_-]{43}$/);
    expect(token.tokenHash).toBe(hashSecret(plaintext));
    expect(JSON.stringify(store.listApiTokens(team.id))).not.toContain(plaintext);
  });

  it("expires 1, 6 or 12 calendar months after creation (UTC, day clamped)", () => {
    const { create } = fixture();
    expect(create("1m").token.expiresAt).toBe(Date.UTC(2025, 1, 28, 10));
    expect(create("6m").token.expiresAt).toBe(Date.UTC(2025, 6, 31, 10));
    expect(create("1y").token.expiresAt).toBe(Date.UTC(2026, 0, 31, 10));
  });

  it("authenticates until the expiry instant, not at it", async () => {
    const { create, catalog, clock } = fixture();
    const { token, plaintext } = create("1m");
    await clock.advance(token.expiresAt - clock.now() - 1);
    expect(catalog.authenticateApiToken(plaintext).token.id).toBe(token.id);
    await clock.advance(1);
    expect(authError(() => catalog.authenticateApiToken(plaintext)).message).toMatch(/expired/);
  });

  it("authenticates as the creator within the team, with the token's abilities", () => {
    const { create, catalog, team, admin } = fixture();
    const { plaintext } = create("1y", admin.id);
    const identity = catalog.authenticateApiToken(plaintext);
    expect(identity.user).toEqual(admin);
    expect(identity.team).toEqual(team);
    expect(identity.abilities).toEqual(["budgets:read", "pools:read"]);
  });

  it("lets owners and admins create and revoke tokens, never members or outsiders", () => {
    const { create, catalog, team, admin, member } = fixture();
    expect(create("1m", admin.id).token.userId).toBe(admin.id);
    expect(() => create("1m", member.id)).toThrow(ForbiddenError);
    expect(() => create("1m", 9_999)).toThrow(ForbiddenError);
    const { token } = create();
    expect(() =>
      catalog.revokeApiToken({ teamId: team.id, actorUserId: member.id, tokenId: token.id }),
    ).toThrow(ForbiddenError);
    expect(
      catalog.revokeApiToken({ teamId: team.id, actorUserId: admin.id, tokenId: token.id })
        ?.revokedAt,
    ).not.toBeNull();
  });

  it("refuses a member's token creation before looking at the body", () => {
    const { catalog, team, member } = fixture();
    expect(() =>
      catalog.createApiToken({
        teamId: team.id,
        actorUserId: member.id,
        name: "",
        abilities: ["nope"],
        lifetime: "2y" as never,
      }),
    ).toThrow(ForbiddenError);
  });

  it("validates name, abilities and lifetime, reporting each field", () => {
    const { catalog, team, owner } = fixture();
    try {
      catalog.createApiToken({
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
        'abilities: Unknown ability "pools:delete".',
        "lifetime: Must be one of 1m, 6m, 1y.",
      ]);
    }
    const base = { teamId: team.id, actorUserId: owner.id, name: "x", lifetime: "1m" as const };
    expect(() => catalog.createApiToken({ ...base, abilities: [] })).toThrow(InvalidArgumentError);
    const deduped = catalog.createApiToken({
      ...base,
      abilities: ["metrics:read", "budgets:read", "metrics:read"],
    });
    expect(deduped.token.abilities).toEqual(["budgets:read", "metrics:read"]);
  });

  it("refuses missing, malformed, unknown and revoked tokens without echoing them", () => {
    const { create, catalog, team, owner } = fixture();
    expect(authError(() => catalog.authenticateApiToken(undefined)).message).toMatch(/Missing/);
    expect(authError(() => catalog.authenticateApiToken("")).message).toMatch(/Missing/);
    const malformed = "slc_tok_short-and-wrong";
    expect(authError(() => catalog.authenticateApiToken(malformed)).message).not.toContain(
      malformed,
    );
    const unknown = `slc_tok_${"A".repeat(43)}`;
    expect(authError(() => catalog.authenticateApiToken(unknown)).message).not.toContain(unknown);
    const { token, plaintext } = create();
    catalog.revokeApiToken({ teamId: team.id, actorUserId: owner.id, tokenId: token.id });
    const revoked = authError(() => catalog.authenticateApiToken(plaintext));
    expect(revoked.message).toMatch(/revoked/);
    expect(revoked.message).not.toContain(plaintext);
    const poolKeyShaped = `slc_key_${plaintext.slice(8)}`;
    expect(() => catalog.authenticateApiToken(poolKeyShaped)).toThrow(UnauthorizedError);
  });

  it("records use at most once a minute", async () => {
    const { create, catalog, store, clock, team } = fixture();
    const { plaintext } = create();
    const first = catalog.authenticateApiToken(plaintext).token;
    expect(catalog.touchApiToken(first)).toBe(true);
    expect(store.listApiTokens(team.id)[0]?.lastUsedAt).toBe(clock.now());
    await clock.advance(59_999);
    expect(catalog.touchApiToken(catalog.authenticateApiToken(plaintext).token)).toBe(false);
    await clock.advance(1);
    expect(catalog.touchApiToken(catalog.authenticateApiToken(plaintext).token)).toBe(true);
    expect(store.listApiTokens(team.id)[0]?.lastUsedAt).toBe(clock.now());
  });
});
