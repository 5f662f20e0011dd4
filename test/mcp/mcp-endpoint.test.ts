import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newOAuthSecret } from "../../adapters/oauth/oauth-secrets.js";
import { hashSecret } from "../../src/catalog/secrets.js";
import {
  type AssistantServer,
  connectMcp,
  INSECURE,
  plantingStore,
  postToolsList,
  signInClient,
  startWithRegisteredClient,
} from "./harness.js";

let env: AssistantServer;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let cookie: string;
const redirectUri = "http://127.0.0.1:40124/cb";

beforeAll(async () => {
  ({ env, as, client, cookie } = await startWithRegisteredClient(redirectUri));
});
afterAll(() => env.close());

function mcpStatus(accessToken: string): Promise<Response> {
  return postToolsList(env.resource, accessToken);
}

describe("MCP endpoint refusals", () => {
  it("without credentials the challenge has no error code (RFC 6750 §3.1); a bad token has invalid_token", async () => {
    const none = await postToolsList(env.resource);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${env.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    const bad = await postToolsList(env.resource, "slc_at_not-a-token");
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toMatch(
      /^Bearer error="invalid_token".*resource_metadata="/,
    );
  });

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

    const planting = plantingStore(env);
    try {
      const fields = {
        userId: env.seeded.adaId,
        teamId: env.seeded.acmeId,
        clientId: client.client_id,
        clientName: "Inspector",
        redirectHost: "127.0.0.1:40124",
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

describe("browser-based clients", () => {
  it("get CORS answers: a preflight, and the challenge header readable from another origin", async () => {
    const preflight = await fetch(env.resource, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:6274",
        "access-control-request-method": "POST",
        // A 2026-07-28 client's request also names its method and target (SEP-2243).
        "access-control-request-headers":
          "authorization, content-type, mcp-protocol-version, mcp-method, mcp-name",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    for (const header of ["authorization", "mcp-protocol-version", "mcp-method", "mcp-name"]) {
      expect(allowed.split(/\s*,\s*/), header).toContain(header);
    }
    const challenge = await fetch(env.resource, {
      method: "POST",
      headers: { origin: "http://localhost:6274", "content-type": "application/json" },
      body: "{}",
    });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate");
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
