import { pathAndQueryOf } from "../../../src/signing/canonical-request.js";

/** The part of `@hono/node-server`'s bindings this code reads. */
interface NodeBindings {
  incoming?: { socket?: { remoteAddress?: string | undefined } | null };
}

/**
 * The caller's socket address when the app runs on `@hono/node-server` (its bindings are
 * passed as `env`, also through the host router); null elsewhere (e.g. `app.request()`).
 *
 * @example
 * ```ts
 * remoteAddressOf(c.env); // "127.0.0.1"
 * ```
 */
export function remoteAddressOf(env: unknown): string | null {
  const incoming = (env as NodeBindings | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? null;
}

/**
 * The request-target (path and query) exactly as the client sent it: on Node the raw
 * request line's target, unnormalised (a signature covers those bytes); elsewhere from the
 * URL.
 *
 * @example
 * ```ts
 * sentTarget(request, c.env); // "/pools/llm/lock/acquire"
 * ```
 */
export function sentTarget(request: Request, env: unknown): string {
  const url = (env as { incoming?: { url?: string } } | undefined)?.incoming?.url;
  return url?.startsWith("/") ? url : pathAndQueryOf(request.url);
}
