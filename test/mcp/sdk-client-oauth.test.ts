import {
  Client,
  type OAuthClientProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AssistantServer, answerConsent, startAssistantServer } from "./harness.js";

let env: AssistantServer;

beforeAll(async () => {
  env = await startAssistantServer();
});
afterAll(() => env.close());

/**
 * The MCP SDK's own OAuth client, as assistants built on it run: the test stands in for the
 * person at the browser (consent with a dashboard session) and for the client's store.
 */
function browserBackedProvider(cookie: string) {
  const stored: Record<string, unknown> = {};
  let callback: URLSearchParams | undefined;
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return "http://127.0.0.1:47011/callback";
    },
    get clientMetadata() {
      return {
        client_name: "SDK Assistant",
        redirect_uris: ["http://127.0.0.1:47011/callback"],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    clientInformation: () => stored.client as never,
    saveClientInformation: (info) => {
      stored.client = info;
    },
    tokens: () => stored.tokens as never,
    saveTokens: (tokens) => {
      stored.tokens = tokens;
    },
    saveCodeVerifier: (verifier) => {
      stored.verifier = verifier;
    },
    codeVerifier: () => stored.verifier as string,
    saveDiscoveryState: (state) => {
      stored.discovery = state;
    },
    discoveryState: () => stored.discovery as never,
    async redirectToAuthorization(url) {
      const page = await fetch(url, { headers: { cookie } });
      const ticket = /name="ticket" value="([^"]+)"/.exec(await page.text())?.[1];
      if (!ticket) throw new Error(`no consent page at ${url}`);
      callback = (await answerConsent(env.baseUrl, cookie, ticket, "approve")).searchParams;
    },
  };
  return { provider, stored, callback: () => callback };
}

describe("the MCP SDK's OAuth client", () => {
  it("discovers, registers, signs in and calls tools against Sluice without help", async () => {
    const cookie = env.sessions.signIn(env.seeded.adaId, env.seeded.acmeId, "owner");
    const { provider, stored, callback } = browserBackedProvider(cookie);
    const first = new StreamableHTTPClientTransport(new URL(env.resource), {
      authProvider: provider,
    });
    await expect(new Client({ name: "sdk", version: "1" }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    const params = callback();
    expect(params?.get("iss")).toBe(env.baseUrl);
    await first.finishAuth(params as URLSearchParams);
    expect(stored.tokens).toMatchObject({ token_type: expect.stringMatching(/bearer/i) });

    const client = new Client({ name: "sdk", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(env.resource), { authProvider: provider }),
    );
    const whoami = await client.callTool({ name: "whoami", arguments: {} });
    expect(whoami.structuredContent).toMatchObject({ role: "owner", team: { slug: "acme" } });
    await client.close();
  });
});
