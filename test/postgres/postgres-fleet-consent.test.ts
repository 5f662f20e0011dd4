import { createHash, randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { runSluice } from "../cli/cli-process.js";
import { sluiceOk } from "../redis/e2e-cluster.js";
import { type Endpoint, type Reply, send } from "../redis/e2e-http.js";
import { requireRedis } from "../redis/redis-harness.js";
import { requirePostgres } from "../support/postgres.js";
import { postgresFleet } from "./pg-fleet.js";

const available =
  (await requirePostgres("the PostgreSQL fleet consent test")) &&
  (await requireRedis("the PostgreSQL fleet consent test"));

const EMAIL = "ada@example.com";
const PASSWORD = "correct horse battery staple";
const REDIRECT_URI = "http://127.0.0.1:40177/cb";

/** A request to one server of the fleet, as a browser or client on its base URL sends it. */
function to(
  endpoint: Endpoint,
  method: "GET" | "POST",
  path: string,
  options: { form?: Record<string, string>; json?: unknown; session?: string } = {},
): Promise<Reply> {
  const origin = `http://localhost:${endpoint.port}`;
  const headers: Record<string, string> = { origin };
  if (options.session) headers.cookie = `sluice_session=${options.session}`;
  let body: string | undefined;
  if (options.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(options.form).toString();
  } else if (options.json !== undefined) {
    body = JSON.stringify(options.json);
  }
  return send(endpoint, {
    method,
    path,
    host: `localhost:${endpoint.port}`,
    headers,
    ...(body === undefined ? {} : { body }),
  });
}

describe.skipIf(!available)("consent on two servers sharing one PostgreSQL", () => {
  const fleet = postgresFleet("pg_fleet_consent");
  afterAll(() => fleet.stop());

  it("a consent page shown by one server is answered through the other (no sticky sessions)", {
    timeout: 120_000,
  }, async () => {
    const env = await fleet.env();
    await sluiceOk(
      ["team", "create", "--name", "Acme", "--slug", "acme"].concat([
        "--owner-name",
        "Ada",
        "--owner-email",
        EMAIL,
      ]),
      env,
    );
    const setPassword = await runSluice(
      ["user", "set-password", "--email", EMAIL],
      env,
      `${PASSWORD}\n`,
    );
    expect(setPassword.code).toBe(0);
    const { endpoints } = await fleet.start(2, { dataDirPerServer: true });
    const [a, b] = endpoints as [Endpoint, Endpoint];

    const signIn = await to(a, "POST", "/sign-in", {
      form: { email: EMAIL, password: PASSWORD, next: "/" },
    });
    expect(signIn.status).toBe(303);
    const cookies = ([] as string[]).concat(signIn.headers["set-cookie"] ?? []).join("\n");
    const session = cookies.match(/sluice_session=(slc_ses_[\w-]+)/)?.[1] as string;
    expect(session).toBeDefined();

    const registered = await to(a, "POST", "/oauth/register", {
      json: { client_name: "Fleet client", redirect_uris: [REDIRECT_URI] },
    });
    expect(registered.status).toBe(201);
    const clientId = JSON.parse(registered.body).client_id as string;

    // Server A shows the consent page...
    const verifier = randomBytes(32).toString("base64url");
    const query = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      state: "fleet",
      scope: "pools:read",
      resource: `http://localhost:${a.port}/mcp`,
    });
    const consent = await to(a, "GET", `/oauth/authorize?${query}`, { session });
    expect(consent.status, String(consent.headers.location)).toBe(200);
    const ticket = /name="ticket" value="([^"]+)"/.exec(consent.body)?.[1] as string;
    expect(ticket).toBeDefined();

    // ...and the person's Allow reaches server B.
    const allowed = await to(b, "POST", "/oauth/authorize", {
      form: { ticket, decision: "approve" },
      session,
    });
    expect(allowed.status, allowed.body.slice(0, 300)).toBe(303);
    const callback = new URL(allowed.headers.location as string);
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    expect(callback.searchParams.get("state")).toBe("fleet");
    const code = callback.searchParams.get("code") as string;
    expect(code).toMatch(/^slc_mac_/);

    const exchanged = await to(a, "POST", "/oauth/token", {
      form: {
        grant_type: "authorization_code",
        code,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
      },
    });
    expect(exchanged.status, exchanged.body).toBe(200);
    expect(JSON.parse(exchanged.body)).toMatchObject({ token_type: "Bearer", scope: "pools:read" });
  });
});
