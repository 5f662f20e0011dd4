import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FirstRunSetup } from "../../src/auth/first-run-setup.js";
import { hashSecret } from "../../src/catalog/secrets.js";
import { PASSWORD, startEmptyDashboard } from "./harness.js";

type EmptyDashboard = Awaited<ReturnType<typeof startEmptyDashboard>>;

const FIRST_TEAM = {
  teamName: "Acme",
  slug: "acme",
  ownerName: "Ada",
  ownerEmail: "ada@acme.test",
  password: PASSWORD,
  repeat: PASSWORD,
};

describe("dashboard first-run setup", () => {
  let d: EmptyDashboard;
  let setup: FirstRunSetup;
  let token: string;
  beforeEach(async () => {
    d = await startEmptyDashboard();
    setup = new FirstRunSetup(d.auth, d.catalog);
    token = (await setup.createToken())!.token;
  });
  afterEach(() => d.close());

  it("creates the first team with you as owner, signs you in and lands on the overview", async () => {
    const page = await d.request(`/setup?token=${token}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Set up Sluice");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");

    const done = await d.request("/setup", { form: { ...FIRST_TEAM, token } });
    expect(done.status).toBe(303);
    expect(done.location).toBe("/");
    const cookie = done.headers.get("set-cookie")!.split(";")[0]!;
    const overview = await d.request("/", { cookie });
    expect(overview.status).toBe(200);
    expect(overview.text).toContain("Acme");

    const team = (await d.store.findTeamBySlug("acme"))!;
    const ada = (await d.store.findUserByEmail("ada@acme.test"))!;
    expect((await d.store.getMembership(team.id, ada.id))?.role).toBe("owner");
    // The password works for a later sign-in.
    const signIn = await d.request("/sign-in", {
      form: { email: "ada@acme.test", password: PASSWORD },
    });
    expect(signIn.status).toBe(303);
  });

  it("shows each error next to its field and keeps the form, and the link still works", async () => {
    const bad = await d.request("/setup", {
      form: { ...FIRST_TEAM, token, slug: "Not A Slug", ownerEmail: "nope" },
    });
    expect(bad.status).toBe(422);
    expect(bad.text).toContain("Use 1-63 lower-case letters, digits and inner hyphens.");
    expect(bad.text).toMatch(/id="error-ownerEmail"/);
    expect(bad.text).toContain('value="Not A Slug"');
    expect(bad.text).toContain('value="Acme"');
    expect(bad.text).not.toContain(PASSWORD);

    // Every error in one round: a mismatched, short password does not hide the others.
    const all = await d.request("/setup", {
      form: {
        token,
        teamName: "",
        slug: "Not A Slug",
        ownerName: "",
        ownerEmail: "nope",
        password: "short",
        repeat: "other",
      },
    });
    expect(all.status).toBe(422);
    for (const field of ["teamName", "slug", "ownerName", "ownerEmail", "password", "repeat"]) {
      expect(all.text).toMatch(new RegExp(`id="error-${field}"`));
    }
    expect(all.text).toContain("Use at least 12 characters.");
    expect(all.text).toContain("The two passwords differ.");
    const shortAndSlug = await d.request("/setup", {
      form: { ...FIRST_TEAM, token, slug: "Not A Slug", password: "short", repeat: "short" },
    });
    expect(shortAndSlug.text).toMatch(/id="error-slug"/);
    expect(shortAndSlug.text).toMatch(/id="error-password"/);

    const short = await d.request("/setup", {
      form: { ...FIRST_TEAM, token, password: "short", repeat: "short" },
    });
    expect(short.status).toBe(422);
    expect(short.text).toContain("Use at least 12 characters.");
    const differ = await d.request("/setup", {
      form: { ...FIRST_TEAM, token, repeat: "something else" },
    });
    expect(differ.status).toBe(422);
    expect(differ.text).toContain("The two passwords differ.");
    expect(await d.store.listTeams()).toEqual([]);

    expect((await d.request("/setup", { form: { ...FIRST_TEAM, token } })).status).toBe(303);
  });

  it("refuses a post from another site", async () => {
    const crossSite = await d.request("/setup", {
      form: { ...FIRST_TEAM, token },
      headers: { origin: "https://evil.test" },
    });
    expect(crossSite.status).toBe(403);
    expect(await d.store.listTeams()).toEqual([]);
  });

  it("works once: a second visitor with the same link, or a newer one, cannot create a team", async () => {
    const newer = (await setup.createToken())!.token;
    expect((await d.request("/setup", { form: { ...FIRST_TEAM, token } })).status).toBe(303);

    const reused = await d.request("/setup", {
      form: { ...FIRST_TEAM, token, teamName: "Evil", slug: "evil" },
    });
    expect(reused.status).toBe(409);
    expect(reused.text).toContain("set up already");
    const other = await d.request("/setup", {
      form: { ...FIRST_TEAM, token: newer, teamName: "Evil", slug: "evil" },
    });
    expect(other.status).toBe(409);
    expect((await d.request(`/setup?token=${newer}`)).status).toBe(409);
    expect(await setup.createToken()).toBeNull();
    expect((await d.store.listTeams()).map((team) => team.slug)).toEqual(["acme"]);
  });

  it("refuses a used-up, expired or mistyped link", async () => {
    const used = (await setup.createToken())!.token;
    await d.auth.store.consumeSetupToken(hashSecret(used), d.clock.now());
    expect((await d.request(`/setup?token=${used}`)).status).toBe(401);
    expect((await d.request("/setup", { form: { ...FIRST_TEAM, token: used } })).status).toBe(401);

    await d.clock.advance(15 * 60_000);
    const expired = await d.request(`/setup?token=${token}`);
    expect(expired.status).toBe(401);
    expect(expired.text).toContain("has expired");
    expect((await d.request("/setup", { form: { ...FIRST_TEAM, token } })).status).toBe(401);
    expect((await d.request("/setup?token=slc_set_typo", {})).status).toBe(401);
    expect(await d.store.listTeams()).toEqual([]);
  });

  it("refuses once a team exists, even with a fresh link (a team created by the CLI)", async () => {
    await d.catalog.createTeamWithOwner({
      teamName: "Globex",
      slug: "globex",
      ownerName: "Gus",
      ownerEmail: "gus@globex.test",
    });
    const page = await d.request(`/setup?token=${token}`);
    expect(page.status).toBe(409);
    expect(page.text).toContain("Sign in instead");
    expect((await d.request("/setup", { form: { ...FIRST_TEAM, token } })).status).toBe(409);
    expect((await d.store.listTeams()).map((team) => team.slug)).toEqual(["globex"]);
  });
});
