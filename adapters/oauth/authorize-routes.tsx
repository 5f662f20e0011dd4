import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { CatalogStore } from "../../src/catalog/types.js";
import type { Clock } from "../../src/clock/clock.js";
import {
  AuthorizeError,
  authorizationResponseUrl,
  checkAuthorizationRequest,
} from "./authorization-request.js";
import { type ClientResolverDeps, metadataDocumentUrl, resolveClient } from "./clients.js";
import { ConsentPage } from "./consent-page.js";
import type { ConsentTickets } from "./consent-ticket.js";
import type { GrantService } from "./grant-service.js";
import { OAuthProtocolError } from "./oauth-error.js";
import { ErrorPage, htmlPage } from "./page-layout.js";
import { isLoopbackRedirectUri, redirectHost } from "./redirect-uris.js";
import type { OAuthSessions } from "./session.js";

export interface AuthorizeRouteDeps {
  grants: GrantService;
  clients: ClientResolverDeps;
  catalog: CatalogStore;
  sessions: OAuthSessions;
  tickets: ConsentTickets;
  clock: Clock;
  issuer: string;
  resource: string;
}

/**
 * `GET /oauth/authorize` (the request checked, then sign-in, then the consent page) and
 * `POST /oauth/authorize` (the Allow / Deny form, behind the app's CSRF check and the signed
 * ticket). A registered client's request is checked before sign-in: an unknown client or
 * redirect URI gets an error page, any other fault goes back to the client (RFC 6749
 * §4.1.2.1). A client known by its metadata document is looked up only once someone is
 * signed in, so nobody signed out can make the server fetch a document.
 *
 * @example
 * ```ts
 * app.route("/oauth", authorizeRoutes(deps));
 * ```
 */
/** Largest consent form read: its ticket is a few KiB, the rest a word or two. */
export const MAX_CONSENT_FORM_BYTES = 65_536;
const FORM_TOO_LARGE = `The consent form is over ${MAX_CONSENT_FORM_BYTES} bytes: no form of this page is. Start again from the application.`;

export function authorizeRoutes(deps: AuthorizeRouteDeps) {
  const routes = new Hono();

  routes.get("/authorize", async (c) => {
    const user = await deps.sessions.currentUser(c);
    const url = new URL(c.req.url);
    const signIn = () => c.redirect(deps.sessions.signInUrl(url.pathname + url.search), 302);
    const params = url.searchParams;
    const clientId = params.get("client_id");
    if (!clientId || params.getAll("client_id").length > 1) {
      return errorPage(c, "Unknown application", "The request names no single client_id.");
    }
    // Nobody signed out makes the server fetch a metadata document; a registered client's
    // request is checked first, so a bad one is refused before anyone signs in for nothing.
    if (!user && metadataDocumentUrl(clientId)) return signIn();
    let request: ReturnType<typeof checkAuthorizationRequest>;
    try {
      request = checkAuthorizationRequest(
        params,
        await resolveClient(deps.clients, clientId),
        deps.resource,
      );
    } catch (error) {
      if (error instanceof OAuthProtocolError) {
        return errorPage(c, "Unknown application", error.description);
      }
      if (!(error instanceof AuthorizeError)) throw error;
      if (!error.redirect) return errorPage(c, "Invalid request", error.description);
      const { uri, state } = error.redirect;
      return sendBack(c, errorUrl(deps.issuer, uri, state, error.error, error.description), uri);
    }
    if (!user) return signIn();
    const allowed = await deps.grants.allowedScopes(user.teamId, user.userId);
    const granted = request.scopes.filter((scope) => allowed.includes(scope));
    if (granted.length === 0) {
      const why = "Your role in this team allows none of the requested scopes.";
      const url = errorUrl(deps.issuer, request.redirectUri, request.state, "invalid_scope", why);
      return sendBack(c, url, request.redirectUri);
    }
    const [account, team] = [
      await deps.catalog.getUser(user.userId),
      await deps.catalog.getTeam(user.teamId),
    ];
    const page = (
      <ConsentPage
        request={request}
        ticket={deps.tickets.issue(request, user, deps.clock.now())}
        userName={account?.name ?? "you"}
        teamName={team?.name ?? "your team"}
        granted={granted}
        withheld={request.scopes.filter((scope) => !allowed.includes(scope))}
      />
    );
    return htmlPage(c, page);
  });

  // The consent form (a ticket and a decision) is read whole, before its session is known:
  // without a bound anyone could post a body of any size.
  const consentFormLimit = bodyLimit({
    maxSize: MAX_CONSENT_FORM_BYTES,
    onError: (c) => htmlPage(c, <ErrorPage title="Form too large" message={FORM_TOO_LARGE} />, 413),
  });

  routes.post("/authorize", consentFormLimit, async (c) => {
    const user = await deps.sessions.currentUser(c);
    const form = await c.req.parseBody().catch(() => {
      // Broken multipart framing is the sender's fault: no bug to log.
      throw new OAuthProtocolError("invalid_request", "The consent form could not be read.");
    });
    const ticket = typeof form.ticket === "string" ? form.ticket : "";
    const request = user ? deps.tickets.open(ticket, user, deps.clock.now()) : null;
    if (!user || !request) {
      const why =
        "This consent form has expired or belongs to another session. Start again from the application.";
      return errorPage(c, "Consent expired", why);
    }
    if (form.decision !== "approve") {
      const why = "The user denied the request.";
      return c.redirect(
        errorUrl(deps.issuer, request.redirectUri, request.state, "access_denied", why),
        303,
      );
    }
    try {
      const code = await deps.grants.approve(request, user);
      const url = authorizationResponseUrl(
        request.redirectUri,
        { code },
        request.state,
        deps.issuer,
      );
      return c.redirect(url, 303);
    } catch (error) {
      if (!(error instanceof OAuthProtocolError)) throw error;
      return c.redirect(
        errorUrl(deps.issuer, request.redirectUri, request.state, error.error, error.description),
        303,
      );
    }
  });

  return routes;
}

function errorUrl(
  issuer: string,
  redirectUri: string,
  state: string | null,
  error: string,
  description: string,
): string {
  return authorizationResponseUrl(
    redirectUri,
    { error, error_description: description },
    state,
    issuer,
  );
}

function errorPage(c: Context, title: string, message: string) {
  return htmlPage(c, <ErrorPage title={title} message={message} />, 400);
}

/**
 * A request refused before anyone consented goes back to its client: by itself to a loopback
 * redirect URI, through a link to any other. Anyone may register a client with any https
 * redirect URI, so following it unasked would make this server an open redirector (RFC 9700
 * §4.11.2); after Allow or Deny the person has seen where they are sent.
 */
function sendBack(c: Context, url: string, redirectUri: string) {
  const reason = new URL(url).searchParams.get("error_description") ?? "";
  if (isLoopbackRedirectUri(redirectUri)) return c.redirect(url, 302);
  const back = { url, host: redirectHost(redirectUri) };
  const page = <ErrorPage title="Request refused" message={reason} back={back} />;
  return htmlPage(c, page, 400);
}
