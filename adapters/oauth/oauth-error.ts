/**
 * An OAuth error response (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 8707 §2): the `error` code,
 * a description for the developer, and the HTTP status (400 unless the RFC says otherwise,
 * e.g. 401 for `invalid_client`). Never carries a token or a code.
 *
 * @example
 * ```ts
 * throw new OAuthProtocolError("invalid_grant", "The authorization code has expired.");
 * ```
 */
export class OAuthProtocolError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status: 400 | 401 | 429 = error === "invalid_client" ? 401 : 400,
  ) {
    super(description);
    this.name = "OAuthProtocolError";
  }

  /** The JSON body of the RFCs. */
  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/** Headers every token-bearing or error answer of the authorization server carries. */
export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

/**
 * The JSON answer for an OAuth error; anything else thrown is a bug and becomes a 400
 * `invalid_request` too (never a 5xx), logged without request data.
 *
 * @example
 * ```ts
 * app.onError((error) => oauthErrorResponse(error));
 * ```
 */
export function oauthErrorResponse(error: unknown, logError: (error: unknown) => void): Response {
  const known =
    error instanceof OAuthProtocolError
      ? error
      : new OAuthProtocolError("invalid_request", "The request could not be processed.");
  if (!(error instanceof OAuthProtocolError)) logError(error);
  const headers: Record<string, string> = { ...NO_STORE };
  if (known.status === 401) headers["WWW-Authenticate"] = 'Basic realm="sluice"';
  if ("retryAfterMs" in known && typeof known.retryAfterMs === "number") {
    headers["Retry-After"] = String(Math.ceil(known.retryAfterMs / 1000));
  }
  return Response.json(known.toJSON(), { status: known.status, headers });
}

/**
 * The answer to a method a metadata document is not served with (`POST` at a
 * `/.well-known/` document, say): 405 naming the methods it is, in the RFCs' error shape,
 * as `/oauth/token` answers a `GET`.
 *
 * @example
 * ```ts
 * app.all("/.well-known/oauth-authorization-server", (c) => metadataMethodNotAllowed(c.req.path));
 * ```
 */
export function metadataMethodNotAllowed(path: string): Response {
  return Response.json(
    { error: "invalid_request", error_description: `Use GET for ${path}.` },
    { status: 405, headers: { ...NO_STORE, Allow: "GET, HEAD" } },
  );
}
