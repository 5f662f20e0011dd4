import { packageVersion } from "../cli/version.js";
import { clientAddressReader } from "../hono/caller/client-address-reader.js";
import { createMcpApp } from "../mcp/create-mcp-app.js";
import { createOAuthApp } from "../oauth/create-oauth-app.js";
import type { SafeFetchOptions } from "../oauth/safe-fetch.js";
import type { OAuthSessions } from "../oauth/session.js";
import { SqliteOAuthStore } from "../sqlite/sqlite-oauth-store.js";
import { pathOf } from "./assistant-routing.js";
import type { ServerAppDeps, ServerAppFactory } from "./create-server.js";
import type { FetchApp } from "./host-router.js";

/** Options of {@link assistantAppForServer}. */
export interface AssistantAppOptions {
  /** The dashboard's sign-in, which the consent and Connected apps pages rely on. */
  sessions: OAuthSessions;
  /** Fetching of clients' metadata documents; default: as `--client-metadata-network` says. */
  clientMetadata?: SafeFetchOptions;
}

/**
 * Until the dashboard's sessions are wired in, nobody is signed in: `/oauth/authorize` sends
 * people to the dashboard's sign-in page and the MCP endpoint still refuses unknown tokens.
 */
export const NO_SESSIONS: OAuthSessions = {
  currentUser: async () => null,
  signInUrl: (returnTo) => `/sign-in?return_to=${encodeURIComponent(returnTo)}`,
};

/**
 * The MCP endpoint and its OAuth authorization server (issue 17) as `sluice serve` mounts
 * them on the base URL, with grants and tokens in the server's SQLite database.
 *
 * @example
 * ```ts
 * await createSluiceServer(config, { assistantApp: assistantAppForServer({ sessions }) });
 * ```
 */
export function assistantAppForServer(options: AssistantAppOptions): ServerAppFactory {
  return (deps) => {
    // Built at the first request, once listening: with `--port 0` the issuer and resource
    // then carry the bound port, not 0 (requests cannot arrive any earlier).
    let app: FetchApp | undefined;
    return {
      fetch: (request, env) => {
        app ??= buildAssistantApp(options, deps);
        return app.fetch(request, env);
      },
    };
  };
}

function buildAssistantApp(options: AssistantAppOptions, deps: ServerAppDeps): FetchApp {
  // Faults (never tokens or request bodies) go to the server's error log.
  const logError = (error: unknown) =>
    deps.reportFailure ? deps.reportFailure(undefined, error) : console.error(error);
  const oauth = createOAuthApp({
    store: deps.oauthStore ?? new SqliteOAuthStore(deps.database),
    catalog: deps.catalog.store,
    sessions: options.sessions,
    clock: deps.clock,
    issuer: deps.publicUrls().baseUrl,
    clientMetadata: options.clientMetadata ?? metadataPolicy(deps.config.clientMetadataNetwork),
    clientAddress: clientAddressReader(deps.config.trustedProxies),
    logError,
    // The key every server on the catalog has: a consent page shown by one server may be
    // answered through another behind the load balancer.
    ticketSealer: deps.catalog.secretBox,
  });
  const mcp = createMcpApp({
    catalog: deps.catalog,
    governor: deps.governor,
    metrics: deps.metrics,
    accessLog: deps.accessLog,
    clock: deps.clock,
    logError,
    grants: oauth.grants,
    issuer: oauth.issuer,
    resource: oauth.resource,
    version: packageVersion(),
  });
  return {
    fetch: (request, env) =>
      isMcpPath(pathOf(request.url)) ? mcp.fetch(request, env) : oauth.app.fetch(request, env),
  };
}

/** `private` lets metadata documents come from private networks and plain http (development). */
function metadataPolicy(network: "public" | "private"): SafeFetchOptions {
  const open = network === "private";
  return { allowPrivateAddresses: open, allowHttp: open };
}

function isMcpPath(path: string): boolean {
  return (
    path === "/mcp" ||
    path === "/.well-known/oauth-protected-resource" ||
    path === "/.well-known/oauth-protected-resource/mcp"
  );
}
