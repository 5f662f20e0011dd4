import type { MiddlewareHandler } from "hono";
import type { CatalogService } from "../../../src/catalog/catalog-service.js";
import type { AuthenticatedToken } from "../../../src/catalog/tokens.js";
import type { Ability } from "../../../src/catalog/types.js";
import { ForbiddenError, StoreUnavailableError, UnauthorizedError } from "../../../src/errors.js";
import type { ControlEnv } from "./control-env.js";

/**
 * The part of the catalog that bearer-token authentication needs.
 *
 * @example
 * ```ts
 * const authenticator: ApiTokenAuthenticator = catalogService;
 * ```
 */
export type ApiTokenAuthenticator = Pick<CatalogService, "authenticateApiToken" | "touchApiToken">;

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/**
 * The token of an `Authorization: Bearer <token>` header; null when the header is absent or
 * uses another scheme or shape.
 *
 * @example
 * ```ts
 * parseBearerToken("Bearer slc_tok_abc"); // "slc_tok_abc"
 * parseBearerToken("Basic dXNlcg=="); // null
 * ```
 */
export function parseBearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  return BEARER.exec(header)?.[1] ?? null;
}

/**
 * Resolves the request's API token: 401 (UnauthorizedError) when the header is missing or
 * malformed, or the token is unknown, expired or revoked. Records use of the token
 * (throttled by the catalog; skipped while the catalog is busy).
 *
 * @example
 * ```ts
 * const auth = await authenticateRequest(catalog, request.headers.get("authorization"));
 * ```
 */
export async function authenticateRequest(
  catalog: ApiTokenAuthenticator,
  authorizationHeader: string | null | undefined,
): Promise<AuthenticatedToken> {
  if (!authorizationHeader) return catalog.authenticateApiToken(null);
  const token = parseBearerToken(authorizationHeader);
  if (token === null) {
    throw new UnauthorizedError("Malformed Authorization header; send: Bearer <token>.");
  }
  const auth = await catalog.authenticateApiToken(token);
  try {
    await catalog.touchApiToken(auth.token);
  } catch (error) {
    // lastUsedAt is informational: a catalog busy with another writer must not fail a read.
    if (!(error instanceof StoreUnavailableError)) throw error;
  }
  return auth;
}

/**
 * Throws 403 (ForbiddenError) unless the token carries the ability.
 *
 * @example
 * ```ts
 * requireAbility(auth, "keys:write");
 * ```
 */
export function requireAbility(auth: AuthenticatedToken, ability: Ability): void {
  if (!auth.abilities.includes(ability)) {
    throw new ForbiddenError(`This API token lacks the "${ability}" ability.`);
  }
}

/**
 * Hono middleware: authenticates the bearer API token, checks `ability` when given, and
 * sets `c.var.auth` ({@link AuthenticatedToken}). Failures are thrown as SluiceErrors for the
 * app's error handler (401 / 403).
 *
 * @example
 * ```ts
 * app.get("/api/v1/pools", apiTokenAuth(catalog, "pools:read"), (c) => c.json(list(c.var.auth.team.id)));
 * ```
 */
export function apiTokenAuth(
  catalog: ApiTokenAuthenticator,
  ability?: Ability,
): MiddlewareHandler<ControlEnv> {
  return async (c, next) => {
    const auth = await authenticateRequest(catalog, c.req.header("authorization"));
    if (ability !== undefined) requireAbility(auth, ability);
    c.set("auth", auth);
    await next();
  };
}
