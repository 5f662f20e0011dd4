import { describe, expect, it } from "vitest";
import { ConflictError, InvalidArgumentError } from "../../src/errors.js";
import { catalogWithTeam } from "./service-fixture.js";

describe("teams", () => {
  it("creates a team with its owner", async () => {
    const { store, team, owner } = await catalogWithTeam();
    expect(team).toMatchObject({ name: "Acme", slug: "acme" });
    expect(owner).toMatchObject({ name: "Ada", email: "ada@acme.test" });
    expect((await store.getMembership(team.id, owner.id))?.role).toBe("owner");
  });

  it("reuses an existing user matched by email, whatever its case", async () => {
    const { catalog, owner } = await catalogWithTeam();
    const second = await catalog.createTeamWithOwner({
      teamName: "Beta",
      slug: "beta",
      ownerName: "Ada L.",
      ownerEmail: " ADA@Acme.test ",
    });
    expect(second.owner.id).toBe(owner.id);
    expect((await catalog.store.getMembership(second.team.id, owner.id))?.role).toBe("owner");
  });

  it("refuses a taken slug and reports every bad field", async () => {
    const { catalog } = await catalogWithTeam();
    await expect(
      catalog.createTeamWithOwner({
        teamName: "Other",
        slug: "acme",
        ownerName: "Bo",
        ownerEmail: "bo@other.test",
      }),
    ).rejects.toThrow(ConflictError);
    try {
      await catalog.createTeamWithOwner({
        teamName: " ",
        slug: "Not A Slug",
        ownerName: "",
        ownerEmail: "nope",
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidArgumentError);
      const fields = (error as InvalidArgumentError).issues.map((issue) => issue.split(":")[0]);
      expect(fields).toEqual(["teamName", "slug", "ownerName", "ownerEmail"]);
    }
  });

  it("adds members and changes their role", async () => {
    const { catalog, store, team, member } = await catalogWithTeam();
    expect((await store.getMembership(team.id, member.id))?.role).toBe("member");
    await catalog.addMember(team.id, { name: "Mo", email: "mo@acme.test" }, "admin");
    expect((await store.getMembership(team.id, member.id))?.role).toBe("admin");
    await expect(
      catalog.addMember(9_999, { name: "X", email: "x@x.test" }, "member"),
    ).rejects.toThrow(InvalidArgumentError);
    await expect(
      catalog.addMember(team.id, { name: "X", email: "x@x.test" }, "root" as never),
    ).rejects.toThrow(InvalidArgumentError);
  });

  it("keeps the team's only owner an owner; with a second owner either may step down", async () => {
    const { catalog, store, team, owner, member } = await catalogWithTeam();
    const ada = { name: owner.name, email: owner.email };
    await expect(catalog.addMember(team.id, ada, "admin")).rejects.toThrow(
      /only owner cannot step down/,
    );
    expect((await store.getMembership(team.id, owner.id))?.role).toBe("owner");
    await catalog.addMember(team.id, ada, "owner"); // staying owner is no demotion
    await catalog.addMember(team.id, { name: "Mo", email: "mo@acme.test" }, "owner");
    await catalog.addMember(team.id, ada, "member");
    expect((await store.getMembership(team.id, owner.id))?.role).toBe("member");
    expect((await store.getMembership(team.id, member.id))?.role).toBe("owner");
  });
});
