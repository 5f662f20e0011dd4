import { describe, expect, it } from "vitest";
import { ConflictError, InvalidArgumentError } from "../../src/errors.js";
import { catalogWithTeam } from "./service-fixture.js";

describe("teams", () => {
  it("creates a team with its owner", () => {
    const { store, team, owner } = catalogWithTeam();
    expect(team).toMatchObject({ name: "Acme", slug: "acme" });
    expect(owner).toMatchObject({ name: "Ada", email: "ada@acme.test" });
    expect(store.getMembership(team.id, owner.id)?.role).toBe("owner");
  });

  it("reuses an existing user matched by email, whatever its case", () => {
    const { catalog, owner } = catalogWithTeam();
    const second = catalog.createTeamWithOwner({
      teamName: "Beta",
      slug: "beta",
      ownerName: "Ada L.",
      ownerEmail: " ADA@Acme.test ",
    });
    expect(second.owner.id).toBe(owner.id);
    expect(catalog.store.getMembership(second.team.id, owner.id)?.role).toBe("owner");
  });

  it("refuses a taken slug and reports every bad field", () => {
    const { catalog } = catalogWithTeam();
    expect(() =>
      catalog.createTeamWithOwner({
        teamName: "Other",
        slug: "acme",
        ownerName: "Bo",
        ownerEmail: "bo@other.test",
      }),
    ).toThrow(ConflictError);
    try {
      catalog.createTeamWithOwner({
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

  it("adds members and changes their role", () => {
    const { catalog, store, team, member } = catalogWithTeam();
    expect(store.getMembership(team.id, member.id)?.role).toBe("member");
    catalog.addMember(team.id, { name: "Mo", email: "mo@acme.test" }, "admin");
    expect(store.getMembership(team.id, member.id)?.role).toBe("admin");
    expect(() => catalog.addMember(9_999, { name: "X", email: "x@x.test" }, "member")).toThrow(
      InvalidArgumentError,
    );
    expect(() =>
      catalog.addMember(team.id, { name: "X", email: "x@x.test" }, "root" as never),
    ).toThrow(InvalidArgumentError);
  });

  it("keeps the team's only owner an owner; with a second owner either may step down", () => {
    const { catalog, store, team, owner, member } = catalogWithTeam();
    const ada = { name: owner.name, email: owner.email };
    expect(() => catalog.addMember(team.id, ada, "admin")).toThrow(/only owner cannot step down/);
    expect(store.getMembership(team.id, owner.id)?.role).toBe("owner");
    catalog.addMember(team.id, ada, "owner"); // staying owner is no demotion
    catalog.addMember(team.id, { name: "Mo", email: "mo@acme.test" }, "owner");
    catalog.addMember(team.id, ada, "member");
    expect(store.getMembership(team.id, owner.id)?.role).toBe("member");
    expect(store.getMembership(team.id, member.id)?.role).toBe("owner");
  });
});
