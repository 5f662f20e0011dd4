import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newOAuthSecret } from "../../adapters/oauth/oauth-secrets.js";
import { hashSecret } from "../../src/catalog/secrets.js";
import {
  type AssistantServer,
  answerConsent,
  openConsent,
  plantingStore,
  postToolsList,
  startWithRegisteredClient,
} from "./harness.js";

let env: AssistantServer;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let cookie: string;
const redirectUri = "http://127.0.0.1:40123/cb";

beforeAll(async () => {
  ({ env, as, client, cookie } = await startWithRegisteredClient(redirectUri));
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
    const url = new URL(as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
    }).toString();
    const omitted = await fetch(url, { headers: { cookie }, redirect: "manual" });
    expect(omitted.status).toBe(400);
    expect(await omitted.text()).toContain("redirect_uri is required.");
  });

  it("checks a registered client's request before sign-in: bad ones are refused, good ones sign in", async () => {
    const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    const signedOut = (fields: Record<string, string>) => {
      const url = new URL(as.authorization_endpoint as string);
      url.search = new URLSearchParams({
        response_type: "code",
        client_id: client.client_id,
        redirect_uri: redirectUri,
        code_challenge: challenge,
        code_challenge_method: "S256",
        state: "s2",
        ...fields,
      }).toString();
      return fetch(url, { redirect: "manual" });
    };
    const unregistered = await signedOut({ redirect_uri: "http://127.0.0.1:40123/other" });
    expect(unregistered.status).toBe(400);
    expect(unregistered.headers.get("location")).toBeNull();
    expect(await unregistered.text()).toContain("registered redirect URIs");
    const unknown = await signedOut({ client_id: "slc_client_nope" });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("Unknown client_id.");
    const plain = await signedOut({ code_challenge_method: "plain" });
    expect(plain.status).toBe(302);
    const back = new URL(plain.headers.get("location") as string);
    expect(back.origin + back.pathname).toBe(redirectUri);
    expect(back.searchParams.get("error")).toBe("invalid_request");
    expect(back.searchParams.get("state")).toBe("s2");
    const good = await signedOut({});
    expect(good.status).toBe(302);
    expect(good.headers.get("location")).toMatch(/^\/sign-in\?return_to=%2Foauth%2Fauthorize%3F/);
  });

  it("a refused request for a redirect URI off this machine is a page with a link back, never a redirect by itself", async () => {
    // Anyone may register any https redirect URI; following it unasked would be an open redirect.
    const registered = await fetch(`${env.baseUrl}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Web app", redirect_uris: ["https://phish.example/cb"] }),
    });
    const web = (await registered.json()) as oauth.Client;
    const request = (fields: Record<string, string>, session?: string) => {
      const url = new URL(as.authorization_endpoint as string);
      url.search = new URLSearchParams({
        response_type: "code",
        client_id: web.client_id,
        redirect_uri: "https://phish.example/cb",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
        state: "s3",
        ...fields,
      }).toString();
      return fetch(url, { redirect: "manual", headers: session ? { cookie: session } : {} });
    };
    const member = env.sessions.signIn(env.seeded.maxId, env.seeded.acmeId, "member");
    for (const [fields, session, error] of [
      [{ response_type: "token" }, undefined, "unsupported_response_type"],
      [{ code_challenge_method: "plain" }, cookie, "invalid_request"],
      [{ resource: "https://elsewhere.example/mcp" }, cookie, "invalid_target"],
      [{ scope: "keys:write" }, member, "invalid_scope"],
    ] as const) {
      const refused = await request(fields, session);
      expect(refused.status, error).toBe(400);
      expect(refused.headers.get("location"), error).toBeNull();
      const html = await refused.text();
      const link = /<a href="([^"]+)">Return to phish\.example<\/a>/.exec(html)?.[1];
      expect(link, error).toBeDefined();
      const back = new URL((link as string).replaceAll("&amp;", "&"));
      expect(back.origin + back.pathname).toBe("https://phish.example/cb");
      expect(back.searchParams.get("error")).toBe(error);
      expect(back.searchParams.get("state")).toBe("s3");
      expect(back.searchParams.get("iss")).toBe(env.baseUrl);
    }
    // Once the person has seen the host on the consent page, their answer goes back by itself.
    const consent = await request({}, cookie);
    const ticket = /name="ticket" value="([^"]+)"/.exec(await consent.text())?.[1] as string;
    const denied = await answerConsent(env.baseUrl, cookie, ticket, "deny");
    expect(denied.origin + denied.pathname).toBe("https://phish.example/cb");
    expect(denied.searchParams.get("error")).toBe("access_denied");
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
    // RFC 6749 §3.1: no parameter twice; two challenges (or methods) leave which one the code
    // is bound to to chance, so the request is refused.
    for (const name of ["code_challenge", "code_challenge_method"]) {
      const twice = new URL(url);
      twice.searchParams.set("code_challenge_method", "S256");
      twice.searchParams.append(name, twice.searchParams.get(name) as string);
      const refused = await fetch(twice, { headers: { cookie }, redirect: "manual" });
      const location = new URL(refused.headers.get("location") as string);
      expect(location.searchParams.get("error"), name).toBe("invalid_request");
      expect(location.searchParams.get("error_description"), name).toBe(`${name} is repeated.`);
    }
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
    const planting = plantingStore(env);
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

  it("a client authenticating in the Authorization header is 401 invalid_client with a challenge (RFC 6749 §5.2)", async () => {
    const { code, verifier } = await freshCode();
    const basic = `Basic ${Buffer.from(`${client.client_id}:a-secret`).toString("base64")}`;
    for (const path of ["/oauth/token", "/oauth/revoke"]) {
      const response = await fetch(`${env.baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          code_verifier: verifier,
          redirect_uri: redirectUri,
          token: code,
        }),
      });
      expect(response.status, path).toBe(401);
      expect(response.headers.get("www-authenticate"), path).toMatch(/^Basic /);
      expect(response.headers.get("cache-control"), path).toBe("no-store");
      expect(await response.json(), path).toMatchObject({ error: "invalid_client" });
    }
    // The code was not spent: the client, told to send client_id, exchanges it.
    expect((await exchange(code, verifier)).status).toBe(200);
  });
});
