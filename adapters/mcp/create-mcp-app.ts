import {
  type AuthInfo,
  bearerAuthChallengeResponse,
  createMcpHandler,
  McpServer,
  OAuthError,
  OAuthErrorCode,
  verifyBearerToken,
} from "@modelcontextprotocol/server";
import { Hono } from "hono";
import { cors } from "hono/cors";
import type { GrantService } from "../oauth/grant-service.js";
import { protectedResourceMetadata } from "../oauth/metadata.js";
import { metadataMethodNotAllowed, OAuthProtocolError } from "../oauth/oauth-error.js";
import { registerSluiceTools, type ToolDeps, toolAccessOf } from "./tool-kit.js";
import { SLUICE_TOOLS } from "./tools/index.js";

/** Dependencies of {@link createMcpApp}. */
export interface McpAppDeps extends ToolDeps {
  /** Verifies the bearer tokens the authorization server issued. */
  grants: GrantService;
  /** The authorization server's issuer (the base URL). */
  issuer: string;
  /** `{issuer}/mcp`: the resource every token must be bound to. */
  resource: string;
  /** The server's version, as MCP clients see it. */
  version: string;
}

/** Protected resource metadata is served at both the path-suffixed and the root form. */
const METADATA_PATHS = [
  "/.well-known/oauth-protected-resource/mcp",
  "/.well-known/oauth-protected-resource",
];

/**
 * The MCP server at `/mcp` (Streamable HTTP, stateless: a fresh server per request, serving
 * both 2025-era and 2026-07-28 clients) with its protected resource metadata (RFC 9728).
 * Every request needs a bearer token from Sluice's authorization server bound to `resource`;
 * without one the answer is 401 with `WWW-Authenticate: Bearer resource_metadata="…"`, where
 * a client starts its sign-in (no error code: RFC 6750 §3.1 keeps `error="invalid_token"` for
 * a token that was sent and is not good).
 *
 * @example
 * ```ts
 * const mcp = createMcpApp({ ...toolDeps, grants: oauth.grants, issuer, resource, version });
 * app.route("/", mcp);
 * ```
 */
export function createMcpApp(deps: McpAppDeps): Hono {
  const resourceUrl = new URL(deps.resource);
  const resourceMetadataUrl = `${deps.issuer}${METADATA_PATHS[0]}`;
  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      try {
        const access = await deps.grants.verifyAccessToken(token);
        return {
          token,
          clientId: access.grant.clientId,
          scopes: access.scopes,
          expiresAt: Math.floor(access.expiresAt / 1000),
          resource: new URL(access.grant.resource),
          extra: { userId: access.grant.userId, teamId: access.grant.teamId },
        };
      } catch (error) {
        if (error instanceof OAuthProtocolError) {
          throw new OAuthError(OAuthErrorCode.InvalidToken, error.description);
        }
        throw error;
      }
    },
  };
  const handler = createMcpHandler(
    ({ authInfo }) => {
      const server = new McpServer(
        { name: "sluice", title: "Sluice", version: deps.version },
        {
          instructions:
            "Sluice governs concurrency to upstream services. Pools are named by subdomain; budgets by id.",
        },
      );
      registerSluiceTools(server, SLUICE_TOOLS, toolAccessOf(authInfo), deps);
      return server;
    },
    // Malformed requests are answered to their client; the server log has no use for them.
    { legacy: "stateless", onerror: () => {} },
  );

  const app = new Hono();
  // Browser-based clients (the MCP inspector) call from other origins with bearer tokens,
  // never cookies, so any origin may, with any request header: 2026-07-28 clients add
  // Mcp-Method and Mcp-Name (SEP-2243), and a fixed list would refuse the next such header.
  // DNS rebinding cannot reach this app: the host router serves only the configured host names.
  app.use(
    "*",
    cors({
      origin: "*",
      exposeHeaders: ["WWW-Authenticate", "Mcp-Session-Id", "Mcp-Protocol-Version"],
    }),
  );
  for (const path of METADATA_PATHS) {
    app.get(path, (c) => c.json(protectedResourceMetadata(deps.resource, deps.issuer)));
    // Without this a POST here fell through to Hono's plain-text "404 Not Found".
    app.all(path, (c) => metadataMethodNotAllowed(c.req.path));
  }
  app.all("/mcp", async (c) => {
    const authorization = c.req.header("authorization");
    if (!authorization) return signInChallenge(resourceMetadataUrl);
    let authInfo: AuthInfo;
    try {
      // Two steps, not requireBearerAuth: its `instanceof Response` check fails under
      // @hono/node-server, which swaps the global Response, and would let the request through.
      authInfo = await verifyBearerToken(authorization, {
        verifier,
        expectedResource: resourceUrl,
        resourceMetadataUrl,
      });
    } catch (error) {
      if (!(error instanceof OAuthError)) deps.logError(error);
      return bearerAuthChallengeResponse(
        error instanceof OAuthError
          ? error
          : new OAuthError(OAuthErrorCode.InvalidToken, "The token could not be checked."),
        { resourceMetadataUrl },
      );
    }
    return handler.fetch(c.req.raw, { authInfo });
  });
  return app;
}

/**
 * The answer to a request that sent no credentials: only where to sign in. RFC 6750 §3.1:
 * "the resource server SHOULD NOT include an error code" when the request had none.
 */
function signInChallenge(resourceMetadataUrl: string): Response {
  return Response.json(
    { error_description: "This endpoint needs a bearer token: see resource_metadata." },
    {
      status: 401,
      headers: { "WWW-Authenticate": `Bearer resource_metadata="${resourceMetadataUrl}"` },
    },
  );
}
