import { expect } from "vitest";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { MemoryCatalogStore } from "../../src/catalog/memory-catalog-store.js";
import { groupIssuesByField } from "../../src/catalog/validation.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { testSecretKey } from "./fixtures.js";

/** 2025-01-31T10:00:00Z: the end of a long month, so month arithmetic shows. */
export const START = Date.UTC(2025, 0, 31, 10);

/** A catalog over the memory store with one team (owner, admin, member) and a manual clock. */
export async function catalogWithTeam() {
  const clock = new ManualClock(START);
  const store = new MemoryCatalogStore({ clock });
  const catalog = new CatalogService({ store, secretBox: new SecretBox(testSecretKey()), clock });
  const { team, owner } = await catalog.createTeamWithOwner({
    teamName: "Acme",
    slug: "acme",
    ownerName: "Ada",
    ownerEmail: "ada@acme.test",
  });
  const admin = (await catalog.addMember(team.id, { name: "Al", email: "al@acme.test" }, "admin"))
    .user;
  const member = (await catalog.addMember(team.id, { name: "Mo", email: "mo@acme.test" }, "member"))
    .user;
  return { clock, store, catalog, team, owner, admin, member };
}

/** The validation issues `run` throws, grouped by field; fails the test when it throws none. */
export async function issuesOf(run: () => unknown): Promise<Record<string, string[]>> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return groupIssuesByField((error as InvalidArgumentError).issues);
  }
  throw new Error("expected InvalidArgumentError");
}
