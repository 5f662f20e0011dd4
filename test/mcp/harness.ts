import { randomBytes } from "node:crypto";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import * as oauth from "oauth4webapi";
import type { OAuthSessions, SessionUser } from "../../adapters/oauth/session.js";
import { assistantAppForServer } from "../../adapters/server/assistant-app.js";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteOAuthStore } from "../../adapters/sqlite/sqlite-oauth-store.js";
import type { Role } from "../../src/catalog/types.js";
import { tempDir } from "../cli/cli-process.js";
import { poolInput } from "../server/fixtures.js";
import { portOutsideEphemeralRange } from "../support/free-port.js";

/** The dashboard's sign-in as the test plays it: a cookie the fixture maps to a member. */
export class SessionFixture implements OAuthSessions {
  private readonly sessions = new Map<string, SessionUser>();

  /** Signs a member in; returns the Cookie header value of their session. */
  signIn(userId: number, teamId: number, role: Role): string {
    const id = randomBytes(16).toString("hex");
    this.sessions.set(id, { userId, teamId, role });
    return `test_session=${id}`;
  }

  async currentUser(c: Context): Promise<SessionUser | null> {
    return this.sessions.get(getCookie(c, "test_session") ?? "") ?? null;
  }

  signInUrl(returnTo: string): string {
    return `/sign-in?return_to=${encodeURIComponent(returnTo)}`;
  }
}

export interface Seeded {
  acmeId: number;
  globexId: number;
  /** Acme's owner. */
  adaId: number;
  /** Acme's member (no keys:write). */
  maxId: number;
  budgetId: number;
}

/** Acme (owner Ada, member Max) with budget "LLM" and pools chat, embed; Globex with globex-chat. */
async function seed(dataDir: string): Promise<Seeded> {
  const data = await openDataDir({ dataDir });
  try {
    const catalog = data.catalog;
    const acme = await catalog.createTeamWithOwner({
      teamName: "Acme",
      slug: "acme",
      ownerName: "Ada",
      ownerEmail: "ada@acme.test",
    });
    const max = await catalog.addMember(
      acme.team.id,
      { name: "Max", email: "max@acme.test" },
      "member",
    );
    const budget = await catalog.store.upsertBudget(acme.team.id, {
      name: "LLM",
      originMaxConcurrent: 20,
    });
    await catalog.store.upsertPool(
      acme.team.id,
      poolInput("chat", {
        name: "Chat",
        maxConcurrent: 4,
        rpm: 600,
        budgetId: budget.id,
        reservedConcurrent: 2,
      }),
    );
    await catalog.store.upsertPool(acme.team.id, poolInput("embed", { name: "Embed" }));
    const globex = await catalog.createTeamWithOwner({
      teamName: "Globex",
      slug: "globex",
      ownerName: "Gus",
      ownerEmail: "gus@globex.test",
    });
    await catalog.store.upsertPool(globex.team.id, poolInput("globex-chat"));
    return {
      acmeId: acme.team.id,
      globexId: globex.team.id,
      adaId: acme.owner.id,
      maxId: max.user.id,
      budgetId: budget.id,
    };
  } finally {
    data.close();
  }
}

export interface AssistantServer {
  server: SluiceServer;
  baseUrl: string;
  resource: string;
  dataDir: string;
  sessions: SessionFixture;
  seeded: Seeded;
  close(): Promise<void>;
}

/**
 * `sluice serve` as composed by default, on a real socket, with the test's session fixture in
 * place of the dashboard and a seeded catalog in its own data directory.
 */
export async function startAssistantServer(
  clientMetadataNetwork: "public" | "private" = "private",
  moreFlags: Record<string, string> = {},
): Promise<AssistantServer> {
  const { dir, cleanup } = tempDir("sluice-mcp-");
  const seeded = await seed(dir);
  const sessions = new SessionFixture();
  const port = await portOutsideEphemeralRange();
  const baseUrl = `http://127.0.0.1:${port}`;
  const server = await createSluiceServer(
    loadServerConfig({
      flags: {
        port: String(port),
        host: "127.0.0.1",
        dataDir: dir,
        baseUrl,
        clientMetadataNetwork,
        ...moreFlags,
      },
    }),
    { ...DEFAULT_SERVER_APPS, assistantApp: assistantAppForServer({ sessions }) },
  );
  await server.listen();
  return {
    server,
    baseUrl,
    resource: `${baseUrl}/mcp`,
    dataDir: dir,
    sessions,
    seeded,
    async close() {
      await server.close();
      cleanup();
    },
  };
}

/** oauth4webapi talks plain http to the test server. */
export const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

/** A bare `tools/list` POST to the MCP endpoint, with a bearer token when given. */
export function postToolsList(resource: string, accessToken?: string): Promise<Response> {
  return postMcp(resource, { method: "tools/list" }, accessToken);
}

/** A bare `tools/call` POST to the MCP endpoint (no session: the endpoint is stateless). */
export function postToolsCall(
  resource: string,
  accessToken: string,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Response> {
  return postMcp(
    resource,
    { method: "tools/call", params: { name, arguments: args } },
    accessToken,
  );
}

function postMcp(resource: string, request: object, accessToken?: string): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (accessToken !== undefined) headers.authorization = `Bearer ${accessToken}`;
  return fetch(resource, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...request }),
  });
}

/** Discovery as a client does it: 401 → resource metadata → authorization server metadata. */
export async function discover(resource: string) {
  const challenge = await postToolsList(resource);
  const header = challenge.headers.get("www-authenticate") ?? "";
  const metadataUrl = /resource_metadata="([^"]+)"/.exec(header)?.[1];
  if (challenge.status !== 401 || !metadataUrl)
    throw new Error(`no challenge: ${challenge.status} ${header}`);
  const resourceUrl = new URL(resource);
  const rs = await oauth.processResourceDiscoveryResponse(
    resourceUrl,
    await oauth.resourceDiscoveryRequest(resourceUrl, INSECURE),
  );
  const issuer = new URL(rs.authorization_servers?.[0] as string);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...INSECURE }),
  );
  return { metadataUrl, rs, as };
}

export interface AuthorizeOptions {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  redirectUri: string;
  cookie: string;
  scope?: string;
  resource?: string;
  verifier?: string;
}

/** Opens the authorize URL with the session and returns the consent page and its ticket. */
export async function openConsent(
  options: AuthorizeOptions & { state: string; challenge: string },
) {
  const url = new URL(options.as.authorization_endpoint as string);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", options.client.client_id);
  url.searchParams.set("redirect_uri", options.redirectUri);
  url.searchParams.set("code_challenge", options.challenge);
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", options.state);
  url.searchParams.set("resource", options.resource ?? `${new URL(url).origin}/mcp`);
  if (options.scope !== undefined) url.searchParams.set("scope", options.scope);
  const response = await fetch(url, { headers: { cookie: options.cookie }, redirect: "manual" });
  const html = await response.text();
  const ticket = /name="ticket" value="([^"]+)"/.exec(html)?.[1];
  return { response, html, ticket, url };
}

/** Posts the consent form's answer; returns the redirect's URL. */
export async function answerConsent(
  baseUrl: string,
  cookie: string,
  ticket: string,
  decision: "approve" | "deny",
): Promise<URL> {
  const response = await fetch(`${baseUrl}/oauth/authorize`, {
    method: "POST",
    headers: { cookie, origin: baseUrl, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ticket, decision }),
    redirect: "manual",
  });
  if (response.status !== 303)
    throw new Error(`consent answered ${response.status}: ${await response.text()}`);
  return new URL(response.headers.get("location") as string);
}

/** The whole sign-in of a client: consent approved, code exchanged for tokens. */
export async function signInClient(options: AuthorizeOptions) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const consent = await openConsent({
    ...options,
    state,
    challenge: await oauth.calculatePKCECodeChallenge(verifier),
  });
  if (!consent.ticket)
    throw new Error(`no consent page: ${consent.response.status} ${consent.html}`);
  const callback = await answerConsent(
    new URL(options.as.issuer).origin,
    options.cookie,
    consent.ticket,
    "approve",
  );
  const params = oauth.validateAuthResponse(options.as, options.client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(
    options.as,
    options.client,
    oauth.None(),
    params,
    options.redirectUri,
    options.verifier ?? verifier,
    {
      ...INSECURE,
      additionalParameters: {
        resource: options.resource ?? `${new URL(options.as.issuer).origin}/mcp`,
      },
    },
  );
  return {
    tokens: await oauth.processAuthorizationCodeResponse(options.as, options.client, response),
    consent,
    params,
    verifier,
  };
}

/** An MCP client over Streamable HTTP with a bearer token. */
export async function connectMcp(resource: string, token: () => string): Promise<Client> {
  const client = new Client({ name: "sluice-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(resource), {
      authProvider: { token: async () => token() },
    }),
  );
  return client;
}

/** Serves a Client ID Metadata Document at `/client.json`; its redirect URI is `/callback`. */
export async function serveClientMetadata(
  document: (origin: string) => unknown,
): Promise<{ clientId: string; redirectUri: string; server: Server }> {
  const server = createHttpServer((_request, response) => {
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify(document(origin)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { clientId: `${origin}/client.json`, redirectUri: `${origin}/callback`, server };
}

/** A server, a client registered with DCR on it, and Ada (Acme's owner) signed in. */
export async function startWithRegisteredClient(redirectUri: string) {
  const env = await startAssistantServer();
  const { as, client } = await registeredClient(env, redirectUri);
  const cookie = env.sessions.signIn(env.seeded.adaId, env.seeded.acmeId, "owner");
  return { env, as, client, cookie };
}

/** A client registered with DCR, as an assistant starts, and the server's metadata. */
async function registeredClient(env: AssistantServer, redirectUri: string) {
  const { as } = await discover(env.resource);
  const client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { redirect_uris: [redirectUri], client_name: "Inspector" },
      INSECURE,
    ),
  );
  return { as, client };
}

/** Another process's view of the server's OAuth tables, to plant records a test needs. */
export function plantingStore(env: AssistantServer): { store: SqliteOAuthStore; close(): void } {
  const database = openSluiceDatabase(join(env.dataDir, "sluice.db"));
  return { store: new SqliteOAuthStore(database), close: () => database.close() };
}
