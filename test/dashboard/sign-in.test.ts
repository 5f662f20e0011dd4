import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDashboardApp } from "../../adapters/dashboard/index.js";
import { BASE_URL, type DashboardHarness, PASSWORD, startDashboard } from "./harness.js";

describe("dashboard sign-in", () => {
  let d: DashboardHarness;
  beforeEach(async () => {
    d = await startDashboard();
    await d.auth.setPassword(d.acme.owner.id, PASSWORD);
  });
  afterEach(async () => d.close());

  it("serves the sign-in page with a CSP that allows only its own scripts, and its assets from the package", async () => {
    const page = await d.request("/sign-in");
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(page.headers.get("x-frame-options")).toBe("SAMEORIGIN");
    expect(page.text).not.toMatch(/<script>|<script [^>]*>[^<]/);
    // Linked with a digest of the content: an upgrade's new script and styles are fetched
    // at once, not after the day a cached copy lives.
    const htmxUrl = page.text.match(/src="(\/assets\/htmx\.min\.js\?v=[0-9a-f]{12})"/)?.[1];
    expect(htmxUrl).toBeDefined();
    const css = page.text.match(/href="(\/assets\/dashboard\.css\?v=([0-9a-f]{12}))"/);
    expect(css?.[2]).toBe(
      createHash("sha256")
        .update((await d.request("/assets/dashboard.css")).text)
        .digest("hex")
        .slice(0, 12),
    );
    expect((await d.request(css![1]!)).status).toBe(200);
    const htmx = await d.request(htmxUrl!);
    expect(htmx.status).toBe(200);
    expect(htmx.text).toContain('version:"2.0.11"');
    expect((await d.request("/assets/uPlot.iife.min.js")).text).toContain("uPlot");
    expect((await d.request("/assets/nothing.js")).status).toBe(404);
  });

  it("signs in with a password: an HttpOnly, SameSite=Lax session cookie holding no user data", async () => {
    const response = await d.request("/sign-in", {
      form: { email: "ada@acme.test", password: PASSWORD, next: "/pool/llm" },
    });
    expect(response.status).toBe(303);
    expect(response.location).toBe("/pool/llm");
    const cookie = response.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^sluice_session=slc_ses_[\w-]{43};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).toContain("Path=/");
    expect(cookie).not.toContain("Secure");
    const overview = await d.request("/", { cookie: cookie.split(";")[0] });
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('Ada · <a href="/account#teams">Acme</a> (owner)');
  });

  it("switches a person of two teams to the other: a new session there with the old expiry, the old one ended", async () => {
    await d.catalog.addMember(d.globex.team.id, { name: "Ada", email: "ada@acme.test" }, "member");
    const signedIn = await d.request("/sign-in", {
      form: { email: "ada@acme.test", password: PASSWORD },
    });
    const acmeCookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0]!;
    const account = await d.request("/account", { cookie: acmeCookie });
    expect(account.text).toMatch(
      /<td>Acme<\/td><td>owner<\/td><td><span class="muted">Signed in here/,
    );
    expect(account.text).toContain(`name="team" value="${d.globex.team.id}"`);
    expect(account.text).toContain("Switch to Globex");

    await d.clock.advance(60 * 60_000);
    const switched = await d.request("/account/team", {
      cookie: acmeCookie,
      form: { team: String(d.globex.team.id) },
    });
    expect(switched.status).toBe(303);
    expect(switched.location).toBe("/");
    const setCookie = switched.headers.get("set-cookie") ?? "";
    // The sign-in's 7 days, less the hour gone: switching does not lengthen a sign-in.
    expect(setCookie).toContain(`Max-Age=${7 * 24 * 3600 - 3600}`);
    const globexCookie = setCookie.split(";")[0]!;
    const overview = await d.request("/", { cookie: globexCookie });
    expect(overview.text).toContain('Ada · <a href="/account#teams">Globex</a> (member)');
    expect(overview.text).toContain("globex-llm");
    expect(overview.text).not.toContain("/pool/llm");
    // A member there: no writes, whatever the role in Acme.
    expect((await d.request("/pool", { cookie: globexCookie, form: { name: "x" } })).status).toBe(
      403,
    );
    // The Acme session is over.
    expect((await d.request("/", { cookie: acmeCookie })).status).toBe(303);
  });

  it("refuses to switch to a team the person is not in, keeping their session", async () => {
    const cookie = await d.signInAs(d.acme.owner.id);
    for (const team of [String(d.globex.team.id), "999", "x", ""]) {
      const refused = await d.request("/account/team", { cookie, form: { team } });
      expect(refused.status, team).toBe(404);
      expect(refused.headers.get("set-cookie"), team).toBeNull();
    }
    const overview = await d.request("/", { cookie });
    expect(overview.text).toContain('<a href="/account#teams">Acme</a> (owner)');
    expect((await d.request("/account", { cookie })).text).not.toContain("Switch to");
  });

  it("names the cookie __Host- and marks it Secure when the base URL is https", async () => {
    const app = createDashboardApp({ ...appDeps(d), baseUrl: "https://sluice.example.test" });
    const response = await app.request("https://sluice.example.test/sign-in", {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: "https://sluice.example.test",
      },
      body: new URLSearchParams({ email: "ada@acme.test", password: PASSWORD }).toString(),
    });
    expect(response.status).toBe(303);
    const cookie = response.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^__Host-sluice_session=/);
    expect(cookie).toContain("Secure");
  });

  it("refuses a wrong password or unknown email alike, keeping the email typed", async () => {
    const wrong = await d.request("/sign-in", {
      form: { email: "ada@acme.test", password: "not the password" },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain("Wrong email or password.");
    expect(wrong.text).toContain('value="ada@acme.test"');
    expect(wrong.headers.get("set-cookie")).toBeNull();
    const unknown = await d.request("/sign-in", {
      form: { email: "who@acme.test", password: PASSWORD },
    });
    expect(unknown.status).toBe(401);
    expect(unknown.text).toContain("Wrong email or password.");
  });

  it("throttles sign-in per account and per address (429), even with the right password", async () => {
    for (let i = 0; i < 5; i++) {
      await d.request("/sign-in", {
        form: { email: "ada@acme.test", password: "wrong password!" },
        headers: { "x-test-address": `10.0.0.${i}` },
      });
    }
    const throttled = await d.request("/sign-in", {
      form: { email: "ada@acme.test", password: PASSWORD },
    });
    expect(throttled.status).toBe(429);
    expect(throttled.text).toContain("Too many failed sign-ins");
    expect(throttled.headers.get("retry-after")).toBe("900");
    expect(throttled.text).toContain("try again in 15 minutes");
    expect(throttled.headers.get("set-cookie")).toBeNull();
    // The window started at the first failure: later, less of it is left.
    await d.clock.advance(10 * 60_000 + 30_000);
    const later = await d.request("/sign-in", {
      form: { email: "ada@acme.test", password: PASSWORD },
    });
    expect(later.status).toBe(429);
    expect(later.headers.get("retry-after")).toBe("270");
    expect(later.text).toContain("try again in 5 minutes");
    await d.clock.advance(270_000);

    await d.auth.setPassword(d.acme.admin.id, PASSWORD);
    for (let i = 0; i < 20; i++) {
      await d.request("/sign-in", {
        form: { email: `guess${i}@acme.test`, password: PASSWORD },
        headers: { "x-test-address": "10.6.6.6" },
      });
    }
    const fromThere = {
      form: { email: "bo@acme.test", password: PASSWORD },
      headers: { "x-test-address": "10.6.6.6" },
    };
    expect((await d.request("/sign-in", fromThere)).status).toBe(429);
    expect(
      (await d.request("/sign-in", { ...fromThere, headers: { "x-test-address": "10.7.7.7" } }))
        .status,
    ).toBe(303);
  });

  it("takes a one-time link only on POST, once", async () => {
    const { token } = await d.auth.createSignInLink(d.acme.team.id, d.acme.owner.id);
    const landing = await d.request(`/sign-in/link?token=${token}`);
    expect(landing.status).toBe(200);
    expect(landing.text).toContain("Continue");
    const first = await d.request("/sign-in/link", { form: { token } });
    expect(first.status).toBe(303);
    expect(first.location).toBe("/account?welcome=1");
    const again = await d.request("/sign-in/link", { form: { token } });
    expect(again.status).toBe(401);
    expect(again.text).toContain("used already, has expired");
  });

  it("sends a visitor without a session to sign in, and back afterwards; never to another site", async () => {
    const response = await d.request("/pool/llm?range=day");
    expect(response.status).toBe(303);
    expect(response.location).toBe("/sign-in?next=%2Fpool%2Fllm%3Frange%3Dday");
    const form = await d.request("/sign-in?next=//evil.test/x");
    expect(form.text).toContain('name="next" value="/"');
    const offsite = await d.request("/sign-in", {
      form: { email: "ada@acme.test", password: PASSWORD, next: "https://evil.test" },
    });
    expect(offsite.location).toBe("/");
    const htmx = await d.request("/live/overview", { headers: { "hx-request": "true" } });
    expect(htmx.status).toBe(401);
    expect(htmx.headers.get("hx-redirect")).toBe("/sign-in");
    const poll = await d.request("/pool/llm/live", {
      headers: { "hx-request": "true", "hx-current-url": `${BASE_URL}/pool/llm` },
    });
    expect(poll.headers.get("hx-redirect")).toBe("/sign-in?next=%2Fpool%2Fllm");
  });

  it("goes on to the page asked for when the sign-in page is reloaded after signing in elsewhere", async () => {
    // A person without a password signs in with a one-time link in another tab, then reloads
    // the sign-in page an assistant's consent request sent them to.
    const next = "/oauth/authorize?client_id=c&state=s";
    const signedIn = await d.request("/sign-in", {
      form: { email: "ada@acme.test", password: PASSWORD, next: "/" },
    });
    const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] as string;
    const reloaded = await d.request(`/sign-in?next=${encodeURIComponent(next)}`, { cookie });
    expect(reloaded.status).toBe(303);
    expect(reloaded.location).toBe(next);
    const offsite = await d.request("/sign-in?next=//evil.test/x", { cookie });
    expect(offsite.location).toBe("/");
    // Signed out, the form as before.
    expect((await d.request(`/sign-in?next=${encodeURIComponent(next)}`)).status).toBe(200);
  });

  it("ends an idle session, and every session at its absolute expiry", async () => {
    const idle = await d.signInAs(d.acme.owner.id);
    await d.clock.advance(d.auth.policy.idleMs);
    expect((await d.request("/", { cookie: idle })).status).toBe(303);
    const active = await d.signInAs(d.acme.owner.id);
    for (let spent = 0; spent < d.auth.policy.absoluteMs - 6 * 3_600_000; spent += 6 * 3_600_000) {
      await d.clock.advance(6 * 3_600_000);
      expect((await d.request("/", { cookie: active })).status).toBe(200);
    }
    await d.clock.advance(6 * 3_600_000);
    expect((await d.request("/", { cookie: active })).status).toBe(303);
  });

  it("signs out here, or everywhere", async () => {
    const here = await d.signInAs(d.acme.owner.id);
    const elsewhere = await d.signInAs(d.acme.owner.id);
    const out = await d.request("/sign-out", { cookie: here, form: {} });
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(/sluice_session=;/);
    expect((await d.request("/", { cookie: here })).status).toBe(303);
    expect((await d.request("/", { cookie: elsewhere })).status).toBe(200);
    const third = await d.signInAs(d.acme.owner.id);
    await d.request("/account/sign-out-everywhere", { cookie: third, form: {} });
    expect((await d.request("/", { cookie: elsewhere })).status).toBe(303);
  });

  it("lets anyone signed in set their password, checked and repeated; other sessions end", async () => {
    const cookie = await d.signInAs(d.acme.member.id);
    const elsewhere = await d.signInAs(d.acme.member.id);
    const differ = await d.request("/account/password", {
      cookie,
      form: { password: "another good one", repeat: "another good 1" },
    });
    expect(differ.status).toBe(422);
    expect(differ.text).toContain("The two passwords differ.");
    const short = await d.request("/account/password", {
      cookie,
      form: { password: "short", repeat: "short" },
    });
    expect(short.status).toBe(422);
    expect(short.text).toContain("Use at least 12 characters.");
    // Both at once: a short password typed differently is told both, not one per try.
    const both = await d.request("/account/password", {
      cookie,
      form: { password: "short", repeat: "shorter" },
    });
    expect(both.status).toBe(422);
    expect(both.text).toMatch(/id="error-password">Use at least 12 characters\./);
    expect(both.text).toMatch(/id="error-repeat">The two passwords differ\./);
    const saved = await d.request("/account/password", {
      cookie,
      form: { password: "another good one", repeat: "another good one" },
    });
    expect(saved.status).toBe(200);
    expect(saved.text).toContain("Signed out 1 other session.");
    expect((await d.request("/account", { cookie })).status).toBe(200);
    expect((await d.request("/account", { cookie: elsewhere })).location).toMatch(/^\/sign-in/);
    expect(
      (
        await d.request("/sign-in", {
          form: { email: "cy@acme.test", password: "another good one" },
        })
      ).status,
    ).toBe(303);
  });

  describe("CSRF", () => {
    it("refuses a post from another site, one with no origin, and any body but a form", async () => {
      const cookie = await d.signInAs(d.acme.owner.id);
      const form = { name: "Stolen", abilities: "pools:read", lifetime: "1y" };
      const crossSite = await d.request("/settings/tokens", {
        cookie,
        form,
        headers: { origin: "https://evil.test" },
      });
      expect(crossSite.status).toBe(403);
      const noOrigin = await d.request("/settings/tokens", {
        cookie,
        form,
        headers: { origin: "" },
      });
      expect(noOrigin.status).toBe(403);
      const json = await d.request("/settings/tokens", {
        cookie,
        method: "POST",
        headers: { "content-type": "application/json", origin: "https://evil.test" },
      });
      expect(json.status).toBe(415);
      expect(await d.store.listApiTokens(d.acme.team.id)).toEqual([]);
      const sameSite = await d.request("/settings/tokens", {
        cookie,
        form,
        headers: { origin: "", "sec-fetch-site": "same-origin" },
      });
      expect(sameSite.status).toBe(201);
    });

    it("protects the sign-in form too (no login CSRF)", async () => {
      const response = await d.request("/sign-in", {
        form: { email: "ada@acme.test", password: PASSWORD },
        headers: { origin: "https://evil.test" },
      });
      expect(response.status).toBe(403);
    });
  });
});

function appDeps(d: DashboardHarness) {
  return {
    catalog: d.catalog,
    auth: d.auth,
    governor: d.governor,
    metrics: d.metrics,
    accessLog: d.accessLog,
    clock: d.clock,
    baseUrl: BASE_URL,
    lockUrl: BASE_URL,
    poolDomain: "pools.localhost",
  };
}
