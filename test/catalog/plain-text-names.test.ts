import { describe, expect, it } from "vitest";
import { PLAIN_TEXT_MESSAGE } from "../../src/catalog/plain-text.js";
import { catalogWithTeam, issuesOf } from "./service-fixture.js";

/** Text a terminal would act on, or that reads in another order than it is stored. */
const HOSTILE = [
  ["ESC", "Acme\u001b[2J"],
  ["NUL", "Ac\u0000me"],
  ["BEL", "Acme\u0007"],
  ["a line break", "Acme\nCorp"],
  ["C1 CSI", "Acme\u009b31m"],
  ["a right-to-left override", "Acme\u202eevil"],
  ["a left-to-right isolate", "Acme\u2066x\u2069"],
  ["a lone surrogate", "Acme\ud800"],
] as const;

describe.each(HOSTILE)("names holding %s", (_what, hostile) => {
  it("are refused as team and owner names and emails, writing nothing", async () => {
    const { catalog, store } = await catalogWithTeam();
    const teamsBefore = (await store.listTeams()).length;
    expect(
      await issuesOf(() =>
        catalog.createTeamWithOwner({
          teamName: hostile,
          slug: "beta",
          ownerName: hostile,
          ownerEmail: `${hostile}@beta.test`,
        }),
      ),
    ).toEqual({
      teamName: [PLAIN_TEXT_MESSAGE],
      ownerName: [PLAIN_TEXT_MESSAGE],
      ownerEmail: [hostile.includes("\n") ? "Must be an email address." : PLAIN_TEXT_MESSAGE],
    });
    expect(await store.listTeams()).toHaveLength(teamsBefore);
  });

  it("are refused as a member's name", async () => {
    const { catalog, team } = await catalogWithTeam();
    expect(
      await issuesOf(() =>
        catalog.addMember(team.id, { name: hostile, email: "bo@acme.test" }, "member"),
      ),
    ).toEqual({ name: [PLAIN_TEXT_MESSAGE] });
    expect(await catalog.store.findUserByEmail("bo@acme.test")).toBeUndefined();
  });

  it("are refused as an API token's name", async () => {
    const { catalog, team, owner } = await catalogWithTeam();
    expect(
      await issuesOf(() =>
        catalog.createApiToken({
          teamId: team.id,
          actorUserId: owner.id,
          name: hostile,
          abilities: ["pools:read"],
          lifetime: "1m",
        }),
      ),
    ).toEqual({ name: [PLAIN_TEXT_MESSAGE] });
    expect(await catalog.store.listApiTokens(team.id)).toEqual([]);
  });
});

describe("plain names", () => {
  it("keep accents, emoji, right-to-left scripts and bidirectional marks", async () => {
    const { catalog } = await catalogWithTeam();
    const created = await catalog.createTeamWithOwner({
      teamName: "Ünïcødé 🔑 עברית\u200f",
      slug: "beta",
      ownerName: "Zoë",
      ownerEmail: "zoe@beta.test",
    });
    expect(created.team.name).toBe("Ünïcødé 🔑 עברית\u200f");
  });
});
