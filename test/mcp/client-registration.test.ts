import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGISTRATION_LIMITS } from "../../adapters/oauth/registration-guard.js";
import { type AssistantServer, openConsent, startAssistantServer } from "./harness.js";

let env: AssistantServer;
beforeAll(async () => {
  env = await startAssistantServer();
});
afterAll(() => env.close());

const redirectUri = "http://127.0.0.1:40200/cb";

function register(metadata: Record<string, unknown>) {
  return fetch(`${env.baseUrl}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [redirectUri], ...metadata }),
  });
}

/** Open registration (RFC 7591, no sign-in) on a real server: what it accepts and how often. */
describe("dynamic client registration", () => {
  it("refuses a client_name that is not plain text, and shows markup in one as text", async () => {
    for (const name of ["Inspector\u202Efdp.exe", "Inspector\u001b[2J", "line\nbreak"]) {
      const refused = await register({ client_name: name });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({
        error: "invalid_client_metadata",
        error_description: expect.stringMatching(/^client_name: Must be plain text/),
      });
    }
    const registered = await register({ client_name: "<script>alert(1)</script>" });
    expect(registered.status).toBe(201);
    const { client_id } = (await registered.json()) as { client_id: string };
    const consent = await openConsent({
      as: { issuer: env.baseUrl, authorization_endpoint: `${env.baseUrl}/oauth/authorize` },
      client: { client_id },
      redirectUri,
      cookie: env.sessions.signIn(env.seeded.adaId, env.seeded.acmeId, "owner"),
      state: "s",
      challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    });
    expect(consent.response.status).toBe(200);
    expect(consent.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(consent.html).not.toContain("<script>alert(1)");
  });

  it("limits registrations per address: past the limit 429 with Retry-After", async () => {
    // The first test registered 4 times from this address.
    const left = REGISTRATION_LIMITS.perAddress - 4;
    for (let i = 0; i < left; i++) expect((await register({})).status).toBe(201);
    const refused = await register({ client_name: "one too many" });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ error: "temporarily_unavailable" });
  });
});
