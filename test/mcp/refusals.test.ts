import { join } from "node:path";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newOAuthSecret } from "../../adapters/oauth/oauth-secrets.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteOAuthStore } from "../../adapters/sqlite/sqlite-oauth-store.js";
import { hashSecret } from "../../src/catalog/secrets.js";
import {
  type AssistantServer,
  answerConsent,
  connectMcp,
  discover,
  INSECURE,
  openConsent,
  postToolsList,
  signInClient,
  startAssistantServer,
} from "./harness.js";

let env: AssistantServer;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let cookie: string;
const redirectUri = "http://127.0.0.1:40123/cb";

beforeAll(async () => {
  env = await startAssistantServer();
  ({ as } = await discover(env.resource));
  client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { redirect_uris: [redirectUri], client_name: "Inspector" },
      INSECURE,
    ),
  );
  cookie = env.sessions.signIn(env.seeded.adaId, env.seeded.acmeId, "owner");
});
afterAll(() => env.close());

async function token(params: Record<string, string>) {
  const response = await fetch(`${env.baseUrl}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read the RFC fields of the body.
  const body: any = await response.json();
  return { status: response.status, body };
}

function mcpStatus(accessToken: string): Promise<Response> {
  return postToolsList(env.resource, accessToken);
}

/** An approved consent's code, not yet exchanged. */
async function freshCode(extra: { resource?: string } = {}) {
  const verifier = oauth.generateRandomCodeVerifier();
  const consent = await openConsent({
    as,
    client,
    redirectUri,
    cookie,
    state: "s1",
    challenge: await oauth.calculatePKCECodeChallenge(verifier),
    ...extra,
  });
  const callback = await answerConsent(env.baseUrl, cookie, consent.ticket as string, "approve");
  return { code: callback.searchParams.get("code") as string, verifier };
}

function exchange(code: string, verifier: string, extra: Record<string, string> = {}) {
  return token({
    grant_type: "authorization_code",
    code,
    code_verifier: verifier,
    client_id: client.client_id,
    redirect_uri: redirectUri,
    resource: env.resource,
    ...extra,
  });
}

/** Another process's view of the server's database, to plant records a test needs. */
function plantingStore() {
  const database = openSluiceDatabase(join(env.dataDir, "sluice.db"));
  return { store: new SqliteOAuthStore(database), close: () => database.close() };
}

describe("authorization endpoint refusals", () => {
  it("an unregistered redirect URI or unknown client gets an error page, never a redirect", async () => {
    const unregistered = await openConsent({
      as,
      client,
      redirectUri: "http://127.0.0.1:40123/other",
      cookie,
      state: "s",
      challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    });
    expect(unregistered.response.status).toBe(400);
    expect(unregistered.response.headers.get("location")).toBeNull();
    expect(unregistered.html).toContain("not one of the client&#39;s registered redirect URIs");
    const unknown = await openConsent({
      as,
      client: { client_id: "slc_client_nope" },
      redirectUri,
      cookie,
      state: "s",
      challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    });
    expect(unknown.response.status).toBe(400);
    expect(unknown.html).toContain("Unknown client_id.");
  });

  it("another resource, no PKCE, plain PKCE or an unknown scope go back to the client as errors", async () => {
    const base = {
      as,
      client,
      redirectUri,
      cookie,
      state: "xyz",
      challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    };
    const cases: [Partial<Parameters<typeof openConsent>[0]>, string][] = [
      [{ resource: "https://elsewhere.example/mcp" }, "invalid_target"],
      [{ challenge: "" }, "invalid_request"],
      [{ scope: "pools:read pools:write" }, "invalid_scope"],
    ];
    for (const [override, error] of cases) {
      const { response } = await openConsent({ ...base, ...override });
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get("location") as string);
      expect(location.origin + location.pathname).toBe(redirectUri);
      expect(location.searchParams.get("error")).toBe(error);
      expect(location.searchParams.get("state")).toBe("xyz");
      expect(location.searchParams.get("iss")).toBe(env.baseUrl);
    }
    const url = new URL(as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "plain",
    }).toString();
    const plain = await fetch(url, { headers: { cookie }, redirect: "manual" });
    expect(new URL(plain.headers.get("location") as string).searchParams.get("error")).toBe(
      "invalid_request",
    );
  });

  it("a denial goes back as access_denied; a forged or cross-site consent post is refused", async () => {
    const consent = await openConsent({
      as,
      client,
      redirectUri,
      cookie,
      state: "d",
      challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    });
    const denied = await answerConsent(env.baseUrl, cookie, consent.ticket as string, "deny");
    expect(denied.searchParams.get("error")).toBe("access_denied");
    expect(denied.searchParams.get("iss")).toBe(env.baseUrl);

    const crossSite = await fetch(`${env.baseUrl}/oauth/authorize`, {
      method: "POST",
      headers: {
        cookie,
        origin: "https://evil.example",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ ticket: consent.ticket as string, decision: "approve" }),
      redirect: "manual",
    });
    expect(crossSite.status).toBe(403);

    // Another signed-in user cannot approve with Ada's ticket.
    const other = env.sessions.signIn(env.seeded.maxId, env.seeded.acmeId, "member");
    const stolen = await fetch(`${env.baseUrl}/oauth/authorize`, {
      method: "POST",
      headers: {
        cookie: other,
        origin: env.baseUrl,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ ticket: consent.ticket as string, decision: "approve" }),
      redirect: "manual",
    });
    expect(stolen.status).toBe(400);
    expect(await stolen.text()).toContain("Consent expired");
  });
});

describe("token endpoint refusals", () => {
  it("a wrong PKCE verifier, another resource or redirect URI is invalid_grant / invalid_target", async () => {
    const wrongVerifier = await freshCode();
    expect(await exchange(wrongVerifier.code, oauth.generateRandomCodeVerifier())).toMatchObject({
      status: 400,
      body: { error: "invalid_grant", error_description: expect.stringContaining("PKCE") },
    });
    const wrongResource = await freshCode();
    expect(
      await exchange(wrongResource.code, wrongResource.verifier, {
        resource: "https://elsewhere.example/mcp",
      }),
    ).toMatchObject({ status: 400, body: { error: "invalid_target" } });
    const wrongRedirect = await freshCode();
    expect(
      await exchange(wrongRedirect.code, wrongRedirect.verifier, {
        redirect_uri: "http://127.0.0.1:40123/other",
      }),
    ).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
  });

  it("a replayed code is refused and revokes the tokens the first exchange gave", async () => {
    const { code, verifier } = await freshCode();
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    expect((await mcpStatus(first.body.access_token)).status).toBe(200);
    expect(await exchange(code, verifier)).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
    expect((await mcpStatus(first.body.access_token)).status).toBe(401);
  });

  it("a code past its 60 seconds is refused", async () => {
    const planting = plantingStore();
    try {
      const grant = await planting.store.insertGrant({
        userId: env.seeded.adaId,
        teamId: env.seeded.acmeId,
        clientId: client.client_id,
        clientName: "Inspector",
        redirectHost: "127.0.0.1:40123",
        scopes: ["pools:read"],
        resource: env.resource,
        createdAt: Date.now() - 61_000,
        lastUsedAt: null,
        revokedAt: null,
      });
      const verifier = oauth.generateRandomCodeVerifier();
      const code = newOAuthSecret("slc_mac_");
      await planting.store.insertCode({
        codeHash: hashSecret(code),
        grantId: grant.id,
        clientId: client.client_id,
        redirectUri,
        codeChallenge: await oauth.calculatePKCECodeChallenge(verifier),
        expiresAt: Date.now() - 1_000,
        usedAt: null,
      });
      expect(await exchange(code, verifier)).toMatchObject({
        status: 400,
        body: { error: "invalid_grant", error_description: "The authorization code has expired." },
      });
    } finally {
      planting.close();
    }
  });

  it("a reused refresh token revokes the whole grant", async () => {
    const { code, verifier } = await freshCode();
    const first = (await exchange(code, verifier)).body;
    const refresh = {
      grant_type: "refresh_token",
      client_id: client.client_id,
      refresh_token: first.refresh_token,
    };
    const second = await token(refresh);
    expect(second.status).toBe(200);
    expect((await mcpStatus(second.body.access_token)).status).toBe(200);
    expect(await token(refresh)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect((await mcpStatus(second.body.access_token)).status).toBe(401);
    expect(await token({ ...refresh, refresh_token: second.body.refresh_token })).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
  });

  it("malformed requests get the RFC errors, never a 5xx", async () => {
    expect(await token({ grant_type: "password", username: "a", password: "b" })).toMatchObject({
      status: 400,
      body: { error: "unsupported_grant_type" },
    });
    expect(await token({ grant_type: "authorization_code" })).toMatchObject({
      status: 400,
      body: { error: "invalid_request", error_description: "code is required." },
    });
    const json = await fetch(`${env.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(json.status).toBe(400);
    expect(json.headers.get("cache-control")).toBe("no-store");
    const huge = await fetch(`${env.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `grant_type=authorization_code&code=${"x".repeat(20_000)}`,
    });
    expect(huge.status).toBe(400);
    expect(await huge.json()).toMatchObject({ error: "invalid_request" });
    // Browser-based clients may call the token endpoint from their own origin.
    const preflight = await fetch(`${env.baseUrl}/oauth/token`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:6274", "access-control-request-method": "POST" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    const registration = await fetch(`${env.baseUrl}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://example.com/cb"] }),
    });
    expect(registration.status).toBe(400);
    expect(await registration.json()).toMatchObject({ error: "invalid_redirect_uri" });
  });
});

describe("MCP endpoint refusals", () => {
  it("an expired token, one revoked at the revocation endpoint, or one bound to another resource is 401", async () => {
    const { tokens } = await signInClient({ as, client, redirectUri, cookie });
    expect((await mcpStatus(tokens.access_token)).status).toBe(200);
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(
        as,
        client,
        oauth.None(),
        tokens.refresh_token as string,
        INSECURE,
      ),
    );
    expect((await mcpStatus(tokens.access_token)).status).toBe(401);

    const planting = plantingStore();
    try {
      const fields = {
        userId: env.seeded.adaId,
        teamId: env.seeded.acmeId,
        clientId: client.client_id,
        clientName: "Inspector",
        redirectHost: "127.0.0.1:40123",
        scopes: ["pools:read" as const],
        createdAt: Date.now(),
        lastUsedAt: null,
        revokedAt: null,
      };
      const elsewhere = await planting.store.insertGrant({
        ...fields,
        resource: "https://elsewhere.example/mcp",
      });
      const here = await planting.store.insertGrant({ ...fields, resource: env.resource });
      const plant = async (grantId: number, expiresAt: number) => {
        const plaintext = newOAuthSecret("slc_mat_");
        await planting.store.insertToken({
          tokenHash: hashSecret(plaintext),
          kind: "access",
          grantId,
          scopes: ["pools:read"],
          expiresAt,
          usedAt: null,
        });
        return plaintext;
      };
      const audience = await mcpStatus(await plant(elsewhere.id, Date.now() + 60_000));
      expect(audience.status).toBe(401);
      expect(audience.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect((await mcpStatus(await plant(here.id, Date.now() - 1))).status).toBe(401);
      expect((await mcpStatus(await plant(here.id, Date.now() + 60_000))).status).toBe(200);
    } finally {
      planting.close();
    }
  });

  it("a tool refuses another team's pool as not found, and bad arguments with a message", async () => {
    const { tokens } = await signInClient({ as, client, redirectUri, cookie, scope: "pools:read" });
    const mcp = await connectMcp(env.resource, () => tokens.access_token);
    try {
      const foreign = await mcp.callTool({ name: "get_pool", arguments: { pool: "globex-chat" } });
      expect(foreign.isError).toBe(true);
      expect(JSON.stringify(foreign.content)).toContain('Your team has no pool \\"globex-chat\\"');
      const missing = await mcp.callTool({ name: "get_pool", arguments: { pool: "nope" } });
      expect(JSON.stringify(missing.content)).toBe(
        JSON.stringify(foreign.content).replace("globex-chat", "nope"),
      );
      const bad = await mcp.callTool({ name: "get_pool", arguments: { pool: 42 } });
      expect(bad.isError).toBe(true);
      expect(JSON.stringify(bad.content)).toContain("pool must be a string");
      const unscoped = await mcp.callTool({ name: "list_budgets", arguments: {} });
      expect(unscoped.isError).toBe(true);
      expect(JSON.stringify(unscoped.content)).toContain("budgets:read");
    } finally {
      await mcp.close();
    }
  });
});

describe("older clients", () => {
  it("a 2025-era client (initialize, then tools/call without a session) is served statelessly", async () => {
    const { tokens } = await signInClient({ as, client, redirectUri, cookie, scope: "pools:read" });
    const post = async (body: unknown, version?: string) => {
      const headers: Record<string, string> = {
        authorization: `Bearer ${tokens.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      };
      if (version) headers["mcp-protocol-version"] = version;
      const response = await fetch(env.resource, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      });
      const text = await response.text();
      // An SSE answer carries the JSON-RPC message on its data line.
      const json = text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "null");
      return { status: response.status, body: JSON.parse(json) };
    };
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "old", version: "1" },
      },
    });
    expect(init.status).toBe(200);
    expect(init.body.result).toMatchObject({
      protocolVersion: "2025-06-18",
      serverInfo: { name: "sluice" },
    });
    const called = await post(
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "get_pool", arguments: { pool: "embed" } },
      },
      "2025-06-18",
    );
    expect(called.status).toBe(200);
    expect(called.body.result.structuredContent.pool).toMatchObject({ subdomain: "embed" });
    // A tool without parameters may be called without `arguments` at all.
    const bare = await post(
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_pools" } },
      "2025-06-18",
    );
    expect(bare.body.result.isError).toBeFalsy();
    expect(bare.body.result.structuredContent.pools).toHaveLength(2);
  });
});
