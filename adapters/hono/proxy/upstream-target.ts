import { InvalidArgumentError } from "../../../src/errors.js";
import { pathAndQueryOf } from "../../../src/signing/canonical-request.js";
import { hostWithoutPort } from "../host-name.js";
import { receivedPathProblem } from "../received-path.js";

/** A pool's origin, split for the upstream client. */
export interface ParsedOrigin {
  /** Scheme, host and port (`http://127.0.0.1:9000`), what the connection pool is keyed by. */
  origin: string;
  /** The origin URL's path without a trailing slash ("" for the root). */
  basePath: string;
}

const parsedOrigins = new Map<string, ParsedOrigin>();
const MAX_PARSED_ORIGINS = 1_000;

/**
 * Splits an origin URL (cached: pools keep their origin for long). Throws
 * `InvalidArgumentError` on a string that is no URL or a URL that is not http(s).
 *
 * @example
 * ```ts
 * parseOrigin("https://api.example.test/v2/"); // { origin: "https://api.example.test", basePath: "/v2" }
 * ```
 */
export function parseOrigin(origin: string): ParsedOrigin {
  const cached = parsedOrigins.get(origin);
  if (cached) return cached;
  const url = URL.canParse(origin) ? new URL(origin) : null;
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    throw new InvalidArgumentError(
      `The pool origin must be an http(s) URL, got ${url ? url.protocol : "no URL"}`,
    );
  }
  const parsed: ParsedOrigin = {
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ""),
  };
  if (parsedOrigins.size >= MAX_PARSED_ORIGINS) parsedOrigins.clear();
  parsedOrigins.set(origin, parsed);
  return parsed;
}

/** The path and query a proxied request is sent to, and the path alone (for key rules). */
export interface RequestTarget {
  /** Path and query exactly as received (no normalisation, encodings kept). */
  pathAndQuery: string;
  path: string;
}

/**
 * The request-target of an incoming request, from its absolute URL, untouched.
 *
 * @example
 * ```ts
 * requestTarget("http://llm.pools.localhost/v1/chat?stream=1"); // { pathAndQuery: "/v1/chat?stream=1", path: "/v1/chat" }
 * ```
 */
export function requestTarget(url: string): RequestTarget {
  const pathAndQuery = pathAndQueryOf(url);
  const query = pathAndQuery.indexOf("?");
  return { pathAndQuery, path: query < 0 ? pathAndQuery : pathAndQuery.slice(0, query) };
}

/**
 * Refuses (400 `invalid_request`) a request whose path is ambiguous (see
 * {@link ambiguousPathProblem}): a dot segment in any spelling, an encoded slash or backslash.
 * The path is read as the client sent it (on Node, before the URL parser resolved `..` and
 * `%2e%2e` away), so the rule covers every spelling, and the path a key's scope is checked
 * against is always the path forwarded.
 *
 * @example
 * ```ts
 * refuseAmbiguousPath(request, env); // throws for "/v1/embeddings/..;/chat"
 * ```
 */
export function refuseAmbiguousPath(request: Request, env: unknown): void {
  const problem = receivedPathProblem(request, env);
  if (problem !== null) {
    throw new InvalidArgumentError(
      `The request is not forwarded: ${problem}. Send the path the origin should serve, with dot segments resolved and slashes unencoded.`,
    );
  }
}

/**
 * The pool subdomain of a pool host (`{subdomain}.{poolDomain}`, any port), or null.
 *
 * @example
 * ```ts
 * poolSubdomainOf("llm.pools.localhost:8080", "pools.localhost"); // "llm"
 * poolSubdomainOf("localhost:8080", "pools.localhost"); // null
 * ```
 */
export function poolSubdomainOf(
  hostHeader: string | null | undefined,
  poolDomain: string,
): string | null {
  if (!hostHeader) return null;
  const host = hostWithoutPort(hostHeader);
  const suffix = `.${poolDomain.toLowerCase()}`;
  if (!host.endsWith(suffix)) return null;
  const label = host.slice(0, -suffix.length);
  return label && !label.includes(".") ? label : null;
}
