import { ForbiddenError, UnsupportedMediaTypeError } from "../../../src/errors.js";
import type { HeaderLookup } from "./request-headers.js";

// Why not hono/cors: it only decides which headers a response carries, and a browser still
// sends the request (a "simple" cross-site POST takes a slot before anyone reads the answer).
// Here a foreign origin is refused before anything happens, and the three lock routes skip
// Hono's middleware chain anyway.

/** Request headers a page may send to the Lock API (the preflight's answer). */
const ALLOWED_HEADERS =
  "content-type, x-svc-key, authorization, x-svc-queue-timeout-ms, x-svc-no-queue";

/** What differs between the APIs an {@link OriginPolicy} guards. */
export interface OriginPolicyOptions {
  /** The API's name in a refusal; default "the Lock API". */
  api?: string;
  /** Request headers besides the Lock API's that pages may send (lower case). */
  extraHeaders?: readonly string[];
}
/** Response headers a page may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS =
  "x-svc-remaining-slots, x-svc-effective-limit, x-svc-queued-ms, x-svc-rejected-by, x-svc-retry-after-ms, retry-after";
const PREFLIGHT_MAX_AGE_SECONDS = "600";
const SHOWN_LENGTH = 100;

/** Which web origins may call the Lock API from a browser. */
export interface OriginPolicy {
  /**
   * The request's `Origin` when it may call (null when it sends none: not a browser, or a
   * same-origin GET); throws {@link ForbiddenError} (403 `unauthorized`) for any other.
   */
  admit(headers: HeaderLookup, requestUrl: string): string | null;
  /** Adds the CORS answer headers for an admitted origin to `response`. */
  decorate(response: Response, origin: string): Response;
  /**
   * The answer to an `OPTIONS` request: a CORS preflight of an admitted origin gets 204 with
   * the CORS headers; one of another origin throws as {@link admit} does; null when the
   * request is no preflight (no `Origin` or no `Access-Control-Request-Method`).
   */
  preflight(headers: HeaderLookup, requestUrl: string): Response | null;
}

/**
 * The Lock API's origin policy: a request without `Origin` (any non-browser client) passes;
 * a browser request passes when its origin is the request's own (scheme and `Host`), one of
 * `allowed` (the server's base and lock URLs, and what the operator lists with
 * `--cors-origins`), or when `allowed` has `*`. Other origins are refused before the key
 * check, so a page elsewhere cannot take (or learn anything about) a pool's slots.
 *
 * @example
 * ```ts
 * const origins = createOriginPolicy(["https://app.example"]);
 * const origin = origins.admit(headers, request.url); // throws for https://evil.example
 * ```
 */
export function createOriginPolicy(
  allowed: readonly string[] = [],
  options: OriginPolicyOptions = {},
): OriginPolicy {
  const api = options.api ?? "the Lock API";
  const allowHeaders = [ALLOWED_HEADERS, ...(options.extraHeaders ?? [])].join(", ");
  const listed = new Set(allowed);
  const any = listed.has("*");
  const admit = (headers: HeaderLookup, requestUrl: string): string | null => {
    const origin = headers.get("origin");
    if (origin === null || any || listed.has(origin) || isOwnOrigin(origin, requestUrl)) {
      return origin;
    }
    const shown = JSON.stringify(origin.slice(0, SHOWN_LENGTH));
    throw new ForbiddenError(
      `Web pages from ${shown} may not call ${api}: the server's operator lists the origins that may (sluice serve --cors-origins).`,
    );
  };
  const decorate = (response: Response, origin: string): Response => {
    response.headers.set("access-control-allow-origin", origin);
    response.headers.set("access-control-expose-headers", EXPOSED_HEADERS);
    response.headers.append("vary", "origin");
    return response;
  };
  return {
    admit,
    decorate,
    preflight(headers, requestUrl) {
      if (headers.get("access-control-request-method") === null) return null;
      const origin = admit(headers, requestUrl);
      if (origin === null) return null;
      const response = new Response(null, {
        status: 204,
        headers: {
          "access-control-allow-methods": "POST",
          "access-control-allow-headers": allowHeaders,
          "access-control-max-age": PREFLIGHT_MAX_AGE_SECONDS,
        },
      });
      return decorate(response, origin);
    },
  };
}

/** Whether `origin` is the scheme and host the request was sent to (a same-origin page). */
function isOwnOrigin(origin: string, requestUrl: string): boolean {
  return requestUrl.startsWith(origin) && requestUrl[origin.length] === "/";
}

/**
 * Refuses (415 `unsupported_media_type`) a request body (`body`, as read) that is not
 * declared as JSON. A browser sends `text/plain`, form and untyped bodies cross-site without
 * a preflight; `application/json` needs one, which {@link OriginPolicy.preflight} answers.
 * An empty body (none, `Content-Length: 0`, or an empty chunked one) needs no type.
 *
 * @example
 * ```ts
 * requireJsonBody(headers, bytes); // throws for Content-Type: text/plain with a body
 * ```
 */
export function requireJsonBody(headers: HeaderLookup, body: Uint8Array, api = "Lock API"): void {
  if (body.byteLength === 0) return;
  const type = headers.get("content-type");
  const media = type?.split(";", 1)[0]?.trim().toLowerCase();
  if (media === "application/json") return;
  const got = type === null ? "none" : JSON.stringify(type.slice(0, SHOWN_LENGTH));
  throw new UnsupportedMediaTypeError(
    `A ${api} body must be JSON sent with Content-Type: application/json (got ${got}).`,
  );
}
