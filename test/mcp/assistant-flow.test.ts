import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AssistantServer,
  connectMcp,
  discover,
  INSECURE,
  postToolsList,
  serveClientMetadata,
  signInClient,
  startAssistantServer,
} from "./harness.js";

let env: AssistantServer;

beforeAll(async () => {
  env = await startAssistantServer();
});
afterAll(() => env.close());

/** The structured result of a tool call that must succeed. */
async function call(
  client: Awaited<ReturnType<typeof connectMcp>>,
  name: string,
  args = {},
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of the tools' documented shapes.
): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
  return result.structuredContent;
}

describe("an assistant given only {base_url}/mcp", () => {
  it("without a token gets 401 and the resource metadata URL to sign in from", async () => {
    // The node-server trap: a helper checking `instanceof Response` would let this through.
    const response = await postToolsList(env.resource);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(
      new RegExp(
        `^Bearer .*resource_metadata="${env.baseUrl}/\\.well-known/oauth-protected-resource/mcp"`,
      ),
    );
    const root = await fetch(`${env.baseUrl}/.well-known/oauth-protected-resource`);
    expect(await root.json()).toMatchObject({
      resource: env.resource,
      authorization_servers: [env.baseUrl],
    });
  });

  it("registers (DCR), signs in through consent, calls every tool, refreshes, and is cut off by Connected apps", async () => {
    const { as, rs } = await discover(env.resource);
    expect(rs.resource).toBe(env.resource);
    expect(as).toMatchObject({
      issuer: env.baseUrl,
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });

    const redirectUri = "http://127.0.0.1:33418/callback";
    const registration = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        redirect_uris: [redirectUri],
        client_name: "Claude Desktop",
        token_endpoint_auth_method: "none",
      },
      INSECURE,
    );
    const client = await oauth.processDynamicClientRegistrationResponse(registration);
    expect(client.token_endpoint_auth_method).toBe("none");

    // Signed out: a valid authorize URL sends the person to the dashboard's sign-in, then back.
    const authorize = new URL(`${env.baseUrl}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    }).toString();
    const signedOut = await fetch(authorize, { redirect: "manual" });
    expect(signedOut.status).toBe(302);
    expect(signedOut.headers.get("location")).toMatch(
      /^\/sign-in\?return_to=%2Foauth%2Fauthorize%3F/,
    );

    const cookie = env.sessions.signIn(env.seeded.adaId, env.seeded.acmeId, "owner");
    const { tokens, consent, params } = await signInClient({ as, client, redirectUri, cookie });
    expect(consent.html).toMatch(/^<!DOCTYPE html><html lang="en">/);
    expect(consent.html).toContain("Allow <strong>Claude Desktop</strong> to use Sluice?");
    expect(consent.html).toContain("<code>127.0.0.1:33418</code>");
    for (const scope of ["budgets:read", "pools:read", "keys:write", "metrics:read"]) {
      expect(consent.html).toContain(`(${scope})`);
    }
    expect(consent.response.headers.get("x-frame-options")).toBe("DENY");
    expect(params.get("iss")).toBe(env.baseUrl);
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe("budgets:read pools:read keys:write metrics:read");
    expect(tokens.access_token).toMatch(/^slc_mat_/);

    let accessToken = tokens.access_token;
    const mcp = await connectMcp(env.resource, () => accessToken);
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "get_budget",
      "get_pool",
      "get_pool_metrics",
      "get_pool_status",
      "list_budgets",
      "list_pool_keys",
      "list_pools",
      "mint_pool_key",
      "query_access_log",
      "revoke_pool_key",
      "whoami",
    ]);
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe("object");
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(
        !["mint_pool_key", "revoke_pool_key"].includes(tool.name),
      );
    }
    expect(
      tools.find((tool) => tool.name === "revoke_pool_key")?.annotations?.destructiveHint,
    ).toBe(true);
    expect(tools.find((tool) => tool.name === "get_pool")?.inputSchema).toMatchObject({
      properties: { pool: { type: "string" } },
      required: ["pool"],
    });

    expect(await call(mcp, "whoami")).toEqual({
      user: { id: env.seeded.adaId, name: "Ada", email: "ada@acme.test" },
      team: { id: env.seeded.acmeId, name: "Acme", slug: "acme" },
      role: "owner",
      scopes: ["budgets:read", "pools:read", "keys:write", "metrics:read"],
    });
    const budgets = await call(mcp, "list_budgets");
    expect(budgets.budgets).toEqual([
      expect.objectContaining({
        id: env.seeded.budgetId,
        name: "LLM",
        origin_max_concurrent: 20,
        unallocated: 18,
      }),
    ]);
    expect((await call(mcp, "get_budget", { budget_id: env.seeded.budgetId })).budget.name).toBe(
      "LLM",
    );
    const pools = await call(mcp, "list_pools");
    expect(pools.pools.map((pool: { subdomain: string }) => pool.subdomain).sort()).toEqual([
      "chat",
      "embed",
    ]);
    const pool = (await call(mcp, "get_pool", { pool: "chat" })).pool;
    expect(pool).toMatchObject({
      subdomain: "chat",
      max_concurrent: 4,
      rpm: 600,
      queue_size: 0,
      backend: "http",
    });
    expect(pool.budget).toMatchObject({ name: "LLM", reserved_concurrent: 2 });

    const slot = await env.server.governor.acquire("chat");
    const status = await call(mcp, "get_pool_status", { pool: "chat" });
    expect(status).toMatchObject({
      pool: "chat",
      held: 1,
      queued: 0,
      max_concurrent: 4,
      effective_limit: 4,
      rpm_limit: 600,
      paused_until: null,
    });
    expect(status.admitted_last_minute).toBeGreaterThanOrEqual(1);
    await env.server.governor.release("chat", slot.slotId);

    const metrics = await call(mcp, "get_pool_metrics", { pool: "chat" });
    expect(metrics).toMatchObject({ requests: 1, admitted: 1, range: { retention_days: 30 } });
    env.server.accessLog.append({
      at: Date.now(),
      pool: "chat",
      keyId: null,
      outcome: "rejected",
      reason: "concurrency",
      queuedMs: 0,
      remoteAddress: "10.0.0.9",
      source: "proxy",
      upstreamStatus: null,
    });
    env.server.accessLog.append({
      at: Date.now(),
      pool: "chat",
      keyId: null,
      outcome: "admitted",
      reason: null,
      queuedMs: 0,
      remoteAddress: "10.0.0.9",
      source: "proxy",
      upstreamStatus: 429,
    });
    // By default: Sluice's refusals, and the calls the upstream throttled.
    const log = await call(mcp, "query_access_log", { pool: "chat", minutes: 5 });
    expect(log.entries).toEqual([
      expect.objectContaining({ outcome: "admitted", source: "proxy", upstream_status: 429 }),
      expect.objectContaining({
        outcome: "rejected",
        reason: "concurrency",
        upstream_status: null,
      }),
    ]);
    expect(log.upstream_throttled).toBe(0);
    // The count is of upstream 429s: an upstream 503 is trouble, but not a throttle.
    for (const status of [503, 429]) {
      const held = await env.server.governor.acquire("chat");
      await env.server.governor.release("chat", held.slotId, { status });
    }
    const counted = await call(mcp, "query_access_log", { pool: "chat", minutes: 5 });
    expect(counted.upstream_throttled).toBe(1);
    // No outcome at all would match nothing: refused, not answered with an empty list.
    const none = await mcp.callTool({
      name: "query_access_log",
      arguments: { pool: "chat", outcomes: [] },
    });
    expect(none.isError).toBe(true);
    expect(JSON.stringify(none.content)).toContain("outcomes must list at least one outcome");
    const throttled = await call(mcp, "query_access_log", { pool: "chat", upstream_status: 429 });
    expect(throttled.entries).toEqual([expect.objectContaining({ upstream_status: 429 })]);

    const minted = (
      await call(mcp, "mint_pool_key", {
        pool: "chat",
        label: "agent",
        access: "read",
        expires_preset: "7d",
      })
    ).key;
    expect(minted.key).toMatch(/^slc_key_/);
    expect(minted).toMatchObject({ label: "agent", access: "read" });
    const listed = (await call(mcp, "list_pool_keys", { pool: "chat" })).keys;
    expect(listed).toEqual([
      expect.objectContaining({ id: minted.id, last_four: minted.key.slice(-4) }),
    ]);
    expect(listed[0].key).toBeUndefined();
    const revoked = (await call(mcp, "revoke_pool_key", { pool: "chat", key_id: minted.id })).key;
    expect(revoked.revoked_at).not.toBeNull();

    // Refresh: a new pair; the old access token keeps working until it expires.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(
        as,
        client,
        oauth.None(),
        tokens.refresh_token as string,
        {
          ...INSECURE,
          additionalParameters: { resource: env.resource },
        },
      ),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    accessToken = refreshed.access_token;
    expect((await call(mcp, "whoami")).role).toBe("owner");

    // Connected apps lists the grant; revoking it cuts the assistant off at once.
    const page = await fetch(`${env.baseUrl}/oauth/connected-apps`, { headers: { cookie } });
    const html = await page.text();
    expect(html).toContain("Claude Desktop");
    expect(html).toContain("budgets:read, pools:read, keys:write, metrics:read");
    const grantId = /connected-apps\/(\d+)\/revoke/.exec(html)?.[1];
    const revoke = await fetch(`${env.baseUrl}/oauth/connected-apps/${grantId}/revoke`, {
      method: "POST",
      headers: { cookie, origin: env.baseUrl, "content-type": "application/x-www-form-urlencoded" },
      redirect: "manual",
    });
    expect(revoke.status).toBe(303);
    expect(
      await (await fetch(`${env.baseUrl}/oauth/connected-apps`, { headers: { cookie } })).text(),
    ).not.toContain("Claude Desktop");
    await expect(mcp.callTool({ name: "whoami", arguments: {} })).rejects.toThrow();
    const after = await postToolsList(env.resource, accessToken);
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"');
    await mcp.close();
  });

  it("signs in a client known by its Client ID Metadata Document", async () => {
    const document = await serveClientMetadata((origin) => ({
      client_id: `${origin}/client.json`,
      client_name: "VS Code",
      redirect_uris: [`${origin}/callback`],
      token_endpoint_auth_method: "none",
    }));
    try {
      const { as } = await discover(env.resource);
      const client: oauth.Client = {
        client_id: document.clientId,
        token_endpoint_auth_method: "none",
      };
      const cookie = env.sessions.signIn(env.seeded.maxId, env.seeded.acmeId, "member");
      const { tokens, consent } = await signInClient({
        as,
        client,
        redirectUri: document.redirectUri,
        cookie,
        scope: "pools:read keys:write",
      });
      expect(consent.html).toContain("Allow <strong>VS Code</strong>");
      expect(consent.html).toContain(
        `identified by <code>${new URL(document.clientId).host}</code>`,
      );
      // A member may not hand out keys: the consent page says so, and the token lacks it.
      expect(consent.html).toContain("your role does not allow it: keys:write");
      expect(tokens.scope).toBe("pools:read");
      const mcp = await connectMcp(env.resource, () => tokens.access_token);
      expect((await call(mcp, "whoami")).role).toBe("member");
      const refused = await mcp.callTool({ name: "mint_pool_key", arguments: { pool: "chat" } });
      expect(refused.isError).toBe(true);
      // Reconnecting would not help: the refusal says the role is why.
      expect(JSON.stringify(refused.content)).toContain(
        'lacks the \\"keys:write\\" scope: your role in this team (member) does not allow it',
      );
      await mcp.close();
    } finally {
      document.server.close();
    }
  });
});

describe("a server with the default --client-metadata-network public", () => {
  it("refuses a metadata document on a loopback address, naming why, without redirecting", async () => {
    const strict = await startAssistantServer("public");
    const document = await serveClientMetadata((origin) => ({
      client_id: `${origin}/client.json`,
      redirect_uris: [`${origin}/callback`],
    }));
    try {
      const cookie = strict.sessions.signIn(strict.seeded.adaId, strict.seeded.acmeId, "owner");
      const url = new URL(`${strict.baseUrl}/oauth/authorize`);
      url.search = new URLSearchParams({
        response_type: "code",
        client_id: document.clientId,
        redirect_uri: document.redirectUri,
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
      }).toString();
      const response = await fetch(url, { headers: { cookie }, redirect: "manual" });
      expect(response.status).toBe(400);
      expect(response.headers.get("location")).toBeNull();
      expect(await response.text()).toContain("its client_id must be an https URL");
    } finally {
      document.server.close();
      await strict.close();
    }
  });
});
