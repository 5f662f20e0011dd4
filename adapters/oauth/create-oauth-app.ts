import { Hono } from "hono";
import { cors } from "hono/cors";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import type { CatalogStore } from "../../src/catalog/types.js";
import type { Clock } from "../../src/clock/clock.js";
import {
  type ClientAddressReader,
  clientAddressReader,
} from "../hono/caller/client-address-reader.js";
import { authorizeRoutes } from "./authorize-routes.js";
import { connectedAppsRoutes } from "./connected-apps-routes.js";
import { ConsentTickets, type TicketSealer } from "./consent-ticket.js";
import { GrantService } from "./grant-service.js";
import { authorizationServerMetadata } from "./metadata.js";
import { metadataMethodNotAllowed, NO_STORE, oauthErrorResponse } from "./oauth-error.js";
import {
  REGISTRATION_LIMITS,
  RegistrationGuard,
  type RegistrationLimits,
} from "./registration-guard.js";
import { createSafeJsonFetcher, type SafeFetchOptions } from "./safe-fetch.js";
import type { OAuthSessions } from "./session.js";
import { tokenRoutes } from "./token-routes.js";
import type { OAuthStore } from "./types.js";

/** Dependencies of {@link createOAuthApp}. */
export interface OAuthAppDeps {
  store: OAuthStore;
  /** The catalog: memberships and roles decide what a user may grant. */
  catalog: CatalogStore;
  /** The dashboard's sign-in. */
  sessions: OAuthSessions;
  clock: Clock;
  /** The server's public base URL; the issuer, and `{issuer}/mcp` the only resource. */
  issuer: string;
  /** How client metadata documents are fetched (private addresses and http are off by default). */
  clientMetadata?: SafeFetchOptions;
  /** Limits of open client registration (defaults: {@link REGISTRATION_LIMITS}). */
  registrationLimits?: Partial<RegistrationLimits>;
  /**
   * The client's address for the registration throttle; default: the socket's. Behind a load
   * balancer, pass `clientAddressReader(trustedProxies)`.
   */
  clientAddress?: ClientAddressReader;
  /** Where unexpected errors are reported (they are answered 400, never 5xx); default console. */
  logError?: (error: unknown) => void;
  /**
   * Seals consent forms; pass the catalog's secret box so that servers sharing the catalog
   * accept each other's (default: a key of this process's own).
   */
  ticketSealer?: TicketSealer;
}

/** The authorization server app and the grant service the MCP endpoint verifies tokens with. */
export interface OAuthApp {
  app: Hono;
  grants: GrantService;
  issuer: string;
  resource: string;
}

/**
 * The OAuth 2.1 authorization server of the MCP endpoint (issue 17), as a Hono app to mount
 * at the base URL: `/.well-known/oauth-authorization-server`, `/oauth/authorize` (consent),
 * `/oauth/token`, `/oauth/revoke`, `/oauth/register` and `/oauth/connected-apps`.
 *
 * @example
 * ```ts
 * const oauth = createOAuthApp({ store, catalog: catalog.store, sessions, clock, issuer: "https://sluice.example" });
 * app.route("/", oauth.app);
 * ```
 */
export function createOAuthApp(deps: OAuthAppDeps): OAuthApp {
  const issuer = deps.issuer.replace(/\/+$/, "");
  const resource = `${issuer}/mcp`;
  const grants = new GrantService({ store: deps.store, catalog: deps.catalog, clock: deps.clock });
  const logError = deps.logError ?? ((error: unknown) => console.error(error));
  const issuerOrigin = new URL(issuer).origin;

  const app = new Hono();
  // On every method, so a browser's preflight (the MCP SDK sends MCP-Protocol-Version, a
  // non-simple header) is answered here rather than by the 405 below, which has no CORS.
  app.use(
    "/.well-known/oauth-authorization-server",
    cors({ origin: "*", allowMethods: ["GET", "HEAD"], maxAge: 600 }),
  );
  app.get("/.well-known/oauth-authorization-server", (c) =>
    c.json(authorizationServerMetadata(issuer)),
  );
  app.all("/.well-known/oauth-authorization-server", (c) => metadataMethodNotAllowed(c.req.path));
  // Forms of the pages here post back to this server only (the consent page's origin).
  const sameOrigin = csrf({
    origin: (origin, c) => origin === issuerOrigin || origin === new URL(c.req.url).origin,
  });
  app.post("/oauth/authorize", sameOrigin);
  app.post("/oauth/connected-apps/*", sameOrigin);
  app.route(
    "/oauth",
    authorizeRoutes({
      grants,
      clients: { store: deps.store, fetchJson: createSafeJsonFetcher(deps.clientMetadata) },
      catalog: deps.catalog,
      sessions: deps.sessions,
      tickets: new ConsentTickets(deps.ticketSealer),
      clock: deps.clock,
      issuer,
      resource,
    }),
  );
  app.route("/oauth", connectedAppsRoutes({ grants, sessions: deps.sessions }));
  const registrations = new RegistrationGuard(deps.store, deps.clock, {
    ...REGISTRATION_LIMITS,
    ...deps.registrationLimits,
  });
  app.route(
    "/oauth",
    tokenRoutes({
      grants,
      store: deps.store,
      clock: deps.clock,
      registrations,
      clientAddress: deps.clientAddress ?? clientAddressReader(),
    }),
  );
  // Clients probe well-known paths (an OpenID configuration…): answer in JSON, as the RFCs do.
  app.notFound((c) =>
    c.json(
      { error: "not_found", error_description: `Nothing is served at ${c.req.path}.` },
      404,
      NO_STORE,
    ),
  );
  app.onError((error) => {
    if (error instanceof HTTPException) return error.getResponse();
    return oauthErrorResponse(error, logError);
  });
  return { app, grants, issuer, resource };
}
