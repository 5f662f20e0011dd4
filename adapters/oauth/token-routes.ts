import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { Clock } from "../../src/clock/clock.js";
import type { ClientAddressReader } from "../hono/caller/client-address-reader.js";
import { JsonBodyError, parseJsonBody } from "../hono/json-body.js";
import { registerClient } from "./clients.js";
import type { GrantService } from "./grant-service.js";
import { NO_STORE, OAuthProtocolError } from "./oauth-error.js";
import type { RegistrationGuard } from "./registration-guard.js";
import type { OAuthStore } from "./types.js";

const MAX_BODY_BYTES = 16_384;

/**
 * `POST /oauth/token`, `/oauth/revoke` (RFC 7009) and `/oauth/register` (RFC 7591), open to
 * browser-based clients (CORS without credentials: nothing here rides on cookies).
 * Registration needs no sign-in, so it is limited per address and unused clients expire
 * ({@link RegistrationGuard}).
 *
 * @example
 * ```ts
 * app.route("/oauth", tokenRoutes({ grants, store, clock, registrations: new RegistrationGuard(store, clock) }));
 * ```
 */
export function tokenRoutes(deps: {
  grants: GrantService;
  store: OAuthStore;
  clock: Clock;
  registrations: RegistrationGuard;
  clientAddress: ClientAddressReader;
}) {
  const routes = new Hono();
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new OAuthProtocolError("invalid_request", "The request body is too large.");
    },
  });
  for (const path of ["/token", "/revoke", "/register"]) {
    routes.use(path, cors({ origin: "*", allowMethods: ["POST"], maxAge: 600 }), limit);
  }

  routes.post("/token", async (c) => {
    const form = await readPublicClientForm(c.req.raw);
    const grantType = form.get("grant_type");
    const body =
      grantType === "authorization_code"
        ? await deps.grants.exchangeCode(form)
        : grantType === "refresh_token"
          ? await deps.grants.refresh(form)
          : unsupportedGrant(grantType);
    return c.json(body, 200, NO_STORE);
  });

  routes.post("/revoke", async (c) => {
    await deps.grants.revokeToken(await readPublicClientForm(c.req.raw));
    return c.body(null, 200, NO_STORE);
  });

  routes.post("/register", async (c) => {
    await deps.registrations.admit(deps.clientAddress(c));
    let body: unknown;
    try {
      body = parseJsonBody(await c.req.text());
    } catch (error) {
      if (!(error instanceof JsonBodyError)) throw error;
      throw new OAuthProtocolError("invalid_client_metadata", error.message);
    }
    return c.json(await registerClient(deps.store, deps.clock, body), 201, NO_STORE);
  });

  // After the POST handlers: any other method (a browser's GET, say) is told which one to use.
  for (const path of ["/token", "/revoke", "/register"]) {
    routes.all(path, (c) =>
      c.json({ error: "invalid_request", error_description: `Use POST for /oauth${path}.` }, 405, {
        ...NO_STORE,
        Allow: "POST",
      }),
    );
  }

  return routes;
}

/**
 * The form of a token or revocation request from a public client. One that authenticates in
 * the Authorization header instead of naming itself in the body (`client_secret_basic`) is
 * told it cannot: RFC 6749 §5.2's 401 `invalid_client`, with the challenge.
 */
async function readPublicClientForm(request: Request): Promise<URLSearchParams> {
  const form = await readForm(request);
  if (request.headers.has("authorization") && !form.has("client_id")) {
    throw new OAuthProtocolError(
      "invalid_client",
      'Clients here are public (token_endpoint_auth_method "none"): send client_id in the body.',
    );
  }
  return form;
}

/** The form body of a token or revocation request (`application/x-www-form-urlencoded`). */
async function readForm(request: Request): Promise<URLSearchParams> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    throw new OAuthProtocolError(
      "invalid_request",
      "Send the parameters as application/x-www-form-urlencoded.",
    );
  }
  return new URLSearchParams(await request.text());
}

function unsupportedGrant(grantType: string | null): never {
  throw new OAuthProtocolError(
    "unsupported_grant_type",
    grantType === null
      ? "grant_type is required."
      : "Only authorization_code and refresh_token are supported.",
  );
}
