import { nodeBindings } from "./node-bindings.js";

/** The request header reads of the Lock API and the proxy (a web `Headers` is one). */
export interface HeaderLookup {
  /** The value of header `name` (lower case); repeated fields joined with ", "; null when absent. */
  get(name: string): string | null;
}

/**
 * Header reads over Node's raw name/value pairs, with the result `Headers.get` gives: a field
 * sent several times is joined with ", " (Node's own `headers` object keeps only the first
 * `Authorization` or `Host`, so it would answer differently). A request reads a handful of
 * headers, so scanning the pairs costs less than building a web `Headers` (which
 * `@hono/node-server` does on first access to `request.headers`).
 */
class RawHeaderLookup implements HeaderLookup {
  constructor(private readonly raw: readonly string[]) {}

  get(name: string): string | null {
    const raw = this.raw;
    let found: string | null = null;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const field = raw[i] as string;
      if (field.length !== name.length || field.toLowerCase() !== name) continue;
      const value = trimHttpWhitespace(raw[i + 1] as string);
      found = found === null ? value : `${found}, ${value}`;
    }
    return found;
  }
}

const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

function isHttpWhitespace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

/** Headers normalises values by stripping leading and trailing HTTP whitespace; so does this. */
function trimHttpWhitespace(value: string): string {
  if (value.length === 0) return value;
  const padded =
    isHttpWhitespace(value.charCodeAt(0)) || isHttpWhitespace(value.charCodeAt(value.length - 1));
  return padded ? value.replace(EDGE_WHITESPACE, "") : value;
}

/**
 * The request's headers for reading: on `@hono/node-server` a view over the Node request's
 * raw headers (no web `Headers` built per request); elsewhere the request's own `Headers`.
 *
 * @example
 * ```ts
 * const headers = requestHeaders(c.env, c.req.raw);
 * headers.get("x-svc-key");
 * ```
 */
export function requestHeaders(env: unknown, request: Request): HeaderLookup {
  const { incoming } = nodeBindings(env);
  return incoming ? new RawHeaderLookup(incoming.rawHeaders) : request.headers;
}
