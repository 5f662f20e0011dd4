import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_AUTH_POLICY } from "../../src/auth/auth-policy.js";
import { runSluice } from "../cli/cli-process.js";
import { sluiceOk } from "../redis/e2e-cluster.js";
import { type Endpoint, type Reply, send } from "../redis/e2e-http.js";
import { requireRedis } from "../redis/redis-harness.js";
import { requirePostgres } from "../support/postgres.js";
import { postgresFleet } from "./pg-fleet.js";

const available =
  (await requirePostgres("the PostgreSQL fleet sign-in test")) &&
  (await requireRedis("the PostgreSQL fleet sign-in test"));

const EMAIL = "ada@example.com";
const PASSWORD = "correct horse battery staple";
const ACCOUNT_LIMIT = DEFAULT_AUTH_POLICY.accountLimit;

/** A dashboard request to one server, as a browser on its base URL sends it. */
function dashboard(
  endpoint: Endpoint,
  path: string,
  options: { form?: Record<string, string>; session?: string } = {},
): Promise<Reply> {
  const origin = `http://localhost:${endpoint.port}`;
  return send(endpoint, {
    method: options.form ? "POST" : "GET",
    path,
    host: `localhost:${endpoint.port}`,
    headers: {
      origin,
      ...(options.form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      ...(options.session ? { cookie: `sluice_session=${options.session}` } : {}),
    },
    ...(options.form ? { body: new URLSearchParams(options.form).toString() } : {}),
  });
}

/** The session id a sign-in set in its cookie (it failed the test when there is none). */
function sessionOf(reply: Reply): string {
  expect(reply.status).toBe(303);
  const cookies = ([] as string[]).concat(reply.headers["set-cookie"] ?? []);
  const match = cookies.join("\n").match(/sluice_session=(slc_ses_[\w-]+)/);
  expect(match, `no session cookie in ${JSON.stringify(cookies)}`).not.toBeNull();
  return match![1]!;
}

/** Whether the session opens the Account page (else the dashboard sends the browser to sign in). */
async function signedIn(endpoint: Endpoint, session: string): Promise<boolean> {
  const reply = await dashboard(endpoint, "/account", { session });
  if (reply.status === 200) {
    expect(reply.body).toContain(EMAIL);
    return true;
  }
  expect(reply.status).toBe(303);
  expect(reply.headers.location).toMatch(/^\/sign-in/);
  return false;
}

describe.skipIf(!available)("dashboard sign-in on two servers sharing one PostgreSQL", () => {
  const fleet = postgresFleet("pg_fleet_sign_in");
  afterAll(() => fleet.stop());

  it("shares setup links, sessions, sign-out, CLI passwords and links, and failure counts", {
    timeout: 120_000,
  }, async () => {
    const env = await fleet.env();
    // Each server has a data directory of its own: only the database is shared.
    const { nodes, endpoints } = await fleet.start(2, { dataDirPerServer: true });
    const [a, b] = endpoints as [Endpoint, Endpoint];

    // The setup link A printed (no team yet) sets Sluice up through B; the session works on A.
    const [, setupToken] = await nodes[0]!.process.waitFor(/\/setup\?token=(\S+)/);
    const setUp = sessionOf(
      await dashboard(b, "/setup", {
        form: {
          token: setupToken!,
          teamName: "Acme",
          slug: "acme",
          ownerName: "Ada Lovelace",
          ownerEmail: EMAIL,
          password: "first password of ada",
          repeat: "first password of ada",
        },
      }),
    );
    expect(await signedIn(a, setUp)).toBe(true);

    // A new password set by the CLI against the database ends that session on both servers.
    const setPassword = await runSluice(
      ["user", "set-password", "--email", EMAIL],
      env,
      `${PASSWORD}\n`,
    );
    expect(setPassword.stderr).toBe("");
    expect(setPassword.stdout).toContain("Ended 1 dashboard session.");
    expect(await signedIn(a, setUp)).toBe(false);
    expect(await signedIn(b, setUp)).toBe(false);

    // Signed in on A through the form: the cookie works on B; signing out on B ends it on A.
    const session = sessionOf(
      await dashboard(a, "/sign-in", { form: { email: EMAIL, password: PASSWORD, next: "/" } }),
    );
    expect(await signedIn(b, session)).toBe(true);
    expect(await signedIn(a, session)).toBe(true);
    expect((await dashboard(b, "/sign-out", { form: {}, session })).status).toBe(303);
    expect(await signedIn(a, session)).toBe(false);
    expect(await signedIn(b, session)).toBe(false);

    // A link minted by the CLI against the database works on either server, and once only.
    for (const [first, second] of [
      [a, b],
      [b, a],
    ] as const) {
      const minted = await sluiceOk(
        ["user", "sign-in-link", "--email", EMAIL, "--base-url", `http://localhost:${first.port}`],
        env,
      );
      const token = minted.stdout.match(/\/sign-in\/link\?token=(slc_sil_[\w-]+)/)?.[1];
      expect(token, minted.stdout).toBeDefined();
      const linked = sessionOf(
        await dashboard(first, "/sign-in/link", { form: { token: token! } }),
      );
      expect(await signedIn(second, linked)).toBe(true);
      expect((await dashboard(second, "/sign-in/link", { form: { token: token! } })).status).toBe(
        401,
      );
    }

    // Failed sign-ins count across the fleet: the limit's worth spread over both servers
    // throttles the account on each, even with the right password.
    for (let n = 0; n < ACCOUNT_LIMIT; n++) {
      const wrong = await dashboard(endpoints[n % 2]!, "/sign-in", {
        form: { email: EMAIL, password: `wrong password ${n}` },
      });
      expect(wrong.status).toBe(401);
    }
    for (const endpoint of endpoints) {
      const throttled = await dashboard(endpoint, "/sign-in", {
        form: { email: EMAIL, password: PASSWORD },
      });
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers["retry-after"])).toBeGreaterThan(0);
    }
    // Nothing of it was kept on the servers' machines.
    for (const node of nodes) expect(existsSync(join(fleet.dir(), node.name))).toBe(false);
  });
});
