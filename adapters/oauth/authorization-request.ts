import type { ResolvedClient } from "./clients.js";
import { isS256Challenge } from "./oauth-secrets.js";
import { registeredRedirectUri } from "./redirect-uris.js";
import { type OAuthScope, parseScope } from "./scopes.js";

/**
 * Parameters that may appear once (RFC 6749 §3.1); `resource` may repeat (RFC 8707). Two
 * challenges would leave which one the code is bound to to chance.
 */
const SINGLE_PARAMETERS = [
  "response_type",
  "client_id",
  "redirect_uri",
  "scope",
  "state",
  "code_challenge",
  "code_challenge_method",
];

/** A checked authorization request (RFC 6749 §4.1.1 with PKCE and a resource indicator). */
export interface AuthorizationRequest {
  clientId: string;
  clientName: string;
  clientKind: ResolvedClient["kind"];
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  scopes: OAuthScope[];
  resource: string;
}

/**
 * An authorization request that fails: with `redirectUri`, the error goes back to the client
 * (§4.1.2.1); without, the client or its redirect URI is not trusted and the person sees an
 * error page instead.
 */
export class AuthorizeError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly redirect: { uri: string; state: string | null } | null,
  ) {
    super(description);
    this.name = "AuthorizeError";
  }
}

/**
 * Checks an authorization request's parameters against its client: the redirect URI first
 * (required, and an unregistered one is never redirected to; a loopback one on any port), then the code flow, PKCE S256,
 * the scopes and the resource, which must be `resource` (RFC 8707) when given.
 *
 * @example
 * ```ts
 * const request = checkAuthorizationRequest(params, await resolveClient(deps, clientId), resource);
 * ```
 */
export function checkAuthorizationRequest(
  params: URLSearchParams,
  client: ResolvedClient,
  resource: string,
): AuthorizationRequest {
  // Always required (as OAuth 2.1 has it), so the token request can always be held to it.
  const uri = params.get("redirect_uri");
  if (uri === null) throw new AuthorizeError("invalid_request", "redirect_uri is required.", null);
  if (!registeredRedirectUri(uri, client.redirectUris)) {
    throw new AuthorizeError(
      "invalid_request",
      "redirect_uri is not one of the client's registered redirect URIs.",
      null,
    );
  }
  const state = params.get("state");
  const fail = (error: string, description: string) =>
    new AuthorizeError(error, description, { uri, state });

  for (const name of SINGLE_PARAMETERS) {
    if (params.getAll(name).length > 1) throw fail("invalid_request", `${name} is repeated.`);
  }
  if (params.get("response_type") !== "code") {
    throw fail("unsupported_response_type", 'Only response_type "code" is supported.');
  }
  const challenge = params.get("code_challenge");
  if (challenge === null || params.get("code_challenge_method") !== "S256") {
    throw fail("invalid_request", "PKCE is required: send code_challenge with method S256.");
  }
  if (!isS256Challenge(challenge)) {
    throw fail("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier.");
  }
  const { scopes, unknown } = parseScope(params.get("scope"));
  if (unknown.length > 0) {
    throw fail("invalid_scope", `Unknown scope: ${unknown.slice(0, 5).join(" ")}.`);
  }
  const resources = params.getAll("resource");
  if (resources.some((value) => !sameResource(value, resource))) {
    throw fail("invalid_target", `The only resource served here is ${resource}.`);
  }
  return {
    clientId: client.clientId,
    clientName: client.clientName,
    clientKind: client.kind,
    redirectUri: uri,
    state,
    codeChallenge: challenge,
    scopes,
    resource,
  };
}

/**
 * Whether a resource indicator names `resource`, ignoring one trailing slash (clients differ).
 *
 * @example
 * ```ts
 * sameResource("https://sluice.example/mcp/", "https://sluice.example/mcp"); // true
 * ```
 */
export function sameResource(value: string, resource: string): boolean {
  return value.replace(/\/$/, "") === resource.replace(/\/$/, "");
}

/**
 * The client's redirect URI with the authorization response (or error) parameters, and `iss`
 * (RFC 9207) so a client talking to several servers knows which one answered.
 *
 * @example
 * ```ts
 * authorizationResponseUrl(request.redirectUri, { code }, request.state, issuer);
 * ```
 */
export function authorizationResponseUrl(
  redirectUri: string,
  fields: Record<string, string>,
  state: string | null,
  issuer: string,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(fields)) url.searchParams.set(name, value);
  if (state !== null) url.searchParams.set("state", state);
  url.searchParams.set("iss", issuer);
  return url.toString();
}
