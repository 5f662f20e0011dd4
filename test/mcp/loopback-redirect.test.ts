import type * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AssistantServer,
  discover,
  openConsent,
  postToolsList,
  serveClientMetadata,
  signInClient,
  startAssistantServer,
} from "./harness.js";

let env: AssistantServer;
let as: oauth.AuthorizationServer;
beforeAll(async () => {
  env = await startAssistantServer();
  ({ as } = await discover(env.resource));
});
afterAll(() => env.close());

const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/**
 * Native clients (a CLI, a desktop app) listen for the redirect on a port the system picks at
 * each sign-in: a loopback redirect URI matches on any port (RFC 8252 §7.3, OAuth 2.1 §2.3.1).
 */
describe("loopback redirect URIs", () => {
  it("a metadata document's portless loopback redirect URI signs in on the port the client picked", async () => {
    const document = await serveClientMetadata((origin) => ({
      client_id: `${origin}/client.json`,
      client_name: "Native CLI",
      redirect_uris: ["http://127.0.0.1/callback", "http://localhost/callback"],
      token_endpoint_auth_method: "none",
    }));
    try {
      const client: oauth.Client = {
        client_id: document.clientId,
        token_endpoint_auth_method: "none",
      };
      const cookie = env.sessions.signIn(env.seeded.adaId, env.seeded.acmeId, "owner");
      for (const redirectUri of [
        "http://127.0.0.1:51004/callback",
        "http://localhost:8765/callback",
      ]) {
        const { tokens, consent, params } = await signInClient({ as, client, redirectUri, cookie });
        expect(consent.html).toContain(`sent back to <code>${new URL(redirectUri).host}</code>`);
        expect(params.get("code")).toMatch(/^slc_mac_/);
        expect((await postToolsList(env.resource, tokens.access_token)).status).toBe(200);
      }
    } finally {
      document.server.close();
    }
  });

  it("a registered loopback URI on another port is accepted; another host, path or scheme is not", async () => {
    const registered = await fetch(`${env.baseUrl}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        redirect_uris: ["http://127.0.0.1:40300/cb", "https://app.example/cb"],
      }),
    });
    const client = (await registered.json()) as oauth.Client;
    const cookie = env.sessions.signIn(env.seeded.adaId, env.seeded.acmeId, "owner");
    const open = (redirectUri: string) =>
      openConsent({ as, client, redirectUri, cookie, state: "s", challenge: CHALLENGE });

    expect((await open("http://127.0.0.1:55555/cb")).response.status).toBe(200);
    for (const redirectUri of [
      "http://localhost:40300/cb",
      "http://[::1]:40300/cb",
      "http://127.0.0.1:40300/cb/",
      "http://127.0.0.1:40300/cb?x=1",
      "http://127.0.0.1:40300/other",
      "https://app.example:8443/cb",
      "http://app.example/cb",
    ]) {
      const refused = await open(redirectUri);
      expect(refused.response.status, redirectUri).toBe(400);
      expect(refused.response.headers.get("location"), redirectUri).toBeNull();
      expect(refused.html, redirectUri).toContain("registered redirect URIs");
    }
  });
});
