import { beforeEach, describe, expect, it } from "vitest";
import { AuthService } from "../../src/auth/auth-service.js";
import { changeMemberRole, removeMember } from "../../src/auth/member-changes.js";
import { MemoryAuthStore } from "../../src/auth/memory-auth-store.js";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { MemoryCatalogStore } from "../../src/catalog/memory-catalog-store.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { ForbiddenError, InvalidArgumentError, UnauthorizedError } from "../../src/errors.js";
import { TEST_PASSWORD_COST } from "./fixtures.js";

async function setup() {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const store = new MemoryCatalogStore({ clock });
  const catalog = new CatalogService({
    store,
    secretBox: new SecretBox(Buffer.alloc(32, 7)),
    clock,
  });
  const auth = new AuthService({
    store: new MemoryAuthStore(),
    catalog: store,
    clock,
    passwordCost: TEST_PASSWORD_COST,
  });
  const { team, owner } = await catalog.createTeamWithOwner({
    teamName: "Acme",
    slug: "acme",
    ownerName: "Ada",
    ownerEmail: "ada@acme.test",
  });
  const admin = (await catalog.addMember(team.id, { name: "Bo", email: "bo@acme.test" }, "admin"))
    .user;
  const member = (await catalog.addMember(team.id, { name: "Cy", email: "cy@acme.test" }, "member"))
    .user;
  const deps = { store, secretBox: catalog.secretBox, clock, auth };
  async function signedIn(userId: number) {
    const { token } = await auth.createSignInLink(team.id, userId);
    return (await auth.redeemSignInLink(token)).sessionId;
  }
  async function tokenOf(userId: number) {
    return (
      await catalog.createApiToken({
        teamId: team.id,
        actorUserId: userId,
        name: "t",
        abilities: ["pools:read"],
        lifetime: "1y",
      })
    ).plaintext;
  }
  return { clock, store, catalog, auth, team, owner, admin, member, deps, signedIn, tokenOf };
}

describe("removing and demoting members", () => {
  let t: Awaited<ReturnType<typeof setup>>;
  beforeEach(async () => {
    t = await setup();
  });

  it("removing a member ends their sessions and revokes their API tokens at once", async () => {
    const session = await t.signedIn(t.admin.id);
    const token = await t.tokenOf(t.admin.id);
    expect((await t.catalog.authenticateApiToken(token)).user.id).toBe(t.admin.id);
    await removeMember(t.deps, { teamId: t.team.id, actorUserId: t.owner.id, userId: t.admin.id });
    expect(await t.auth.authenticate(session)).toBeNull();
    await expect(t.catalog.authenticateApiToken(token)).rejects.toThrow(UnauthorizedError);
    // Revoked, not just orphaned: re-adding the person does not bring the token back.
    await t.catalog.addMember(t.team.id, { name: "Bo", email: "bo@acme.test" }, "admin");
    await expect(t.catalog.authenticateApiToken(token)).rejects.toThrow("revoked");
  });

  it("lowering an admin to member ends their sessions and tokens; raising them does not", async () => {
    const session = await t.signedIn(t.admin.id);
    const token = await t.tokenOf(t.admin.id);
    await changeMemberRole(t.deps, {
      teamId: t.team.id,
      actorUserId: t.owner.id,
      userId: t.admin.id,
      role: "owner",
    });
    expect(await t.auth.authenticate(session)).not.toBeNull();
    await changeMemberRole(t.deps, {
      teamId: t.team.id,
      actorUserId: t.owner.id,
      userId: t.admin.id,
      role: "member",
    });
    expect(await t.auth.authenticate(session)).toBeNull();
    await expect(t.catalog.authenticateApiToken(token)).rejects.toThrow(UnauthorizedError);
    expect((await t.store.getMembership(t.team.id, t.admin.id))?.role).toBe("member");
  });

  it("keeps the last owner, and lets members and admins do only what their role allows", async () => {
    const own = { teamId: t.team.id, actorUserId: t.owner.id, userId: t.owner.id };
    await expect(removeMember(t.deps, own)).rejects.toThrow(InvalidArgumentError);
    await expect(changeMemberRole(t.deps, { ...own, role: "admin" })).rejects.toThrow(/last owner/);
    const byMember = { teamId: t.team.id, actorUserId: t.member.id, userId: t.admin.id };
    await expect(removeMember(t.deps, byMember)).rejects.toThrow(ForbiddenError);
    const byAdmin = { teamId: t.team.id, actorUserId: t.admin.id, userId: t.owner.id };
    await expect(removeMember(t.deps, byAdmin)).rejects.toThrow(ForbiddenError);
    await expect(
      changeMemberRole(t.deps, { ...byAdmin, userId: t.member.id, role: "owner" }),
    ).rejects.toThrow(ForbiddenError);
    await changeMemberRole(t.deps, { ...byAdmin, userId: t.member.id, role: "admin" });
    expect((await t.store.getMembership(t.team.id, t.member.id))?.role).toBe("admin");
    // With a second owner, the first may step down.
    await changeMemberRole(t.deps, { ...own, userId: t.admin.id, role: "owner" });
    await changeMemberRole(t.deps, { ...own, role: "member" });
    expect((await t.store.getMembership(t.team.id, t.owner.id))?.role).toBe("member");
  });
});

describe("API tokens of someone no longer in the team (issue 23 item 12)", () => {
  it("stop authenticating as soon as the membership is gone, before any revocation", async () => {
    const t = await setup();
    const token = await t.tokenOf(t.admin.id);
    expect((await t.catalog.authenticateApiToken(token)).team.id).toBe(t.team.id);
    // Only the membership goes (no revocation): the token check itself must refuse.
    await t.store.removeMembership(t.team.id, t.admin.id);
    await expect(t.catalog.authenticateApiToken(token)).rejects.toThrow(UnauthorizedError);
  });
});
