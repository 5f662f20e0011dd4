import { Hono } from "hono";
import { hostWithoutPort } from "../hono/host-name.js";
import { continueIfExpected } from "../hono/lock/expect-continue.js";

/** Anything with a Fetch-style handler: a Hono app, or a hand-written `{ fetch }`. */
export interface FetchApp {
  fetch(request: Request, env?: unknown): Response | Promise<Response>;
}

/** Options of {@link createHostRouter}. */
export interface HostRouterOptions {
  /** Public URL of the Control API; its host name selects the control app. */
  baseUrl: string;
  /** Public URL of the Lock API; its host name selects the lock app for `/pools/*`. */
  lockUrl: string;
  /** A pool is served at `<subdomain>.<poolDomain>`. */
  poolDomain: string;
  controlApp: FetchApp;
  /** Lock API app (routes `/pools/{pool}/lock/...`); absent: those paths answer 404. */
  lockApp?: FetchApp;
  /** Pool proxy app; absent: pool hosts answer 404 until the proxy exists. */
  proxyApp?: FetchApp;
}

/** Where a request goes, decided by its Host header (and, on the lock host, its path). */
export type RouteTarget = "control" | "lock" | "proxy" | "none";

/** The paths a request with no Host at all may reach (on the base host's app). */
const HOSTLESS_PATHS = new Set(["/healthz", "/readyz"]);
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1"]);
const POOL_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Loopback names are interchangeable, so `curl http://127.0.0.1:8080` reaches a `localhost` base URL. */
function sameHost(requestHost: string, configuredHost: string): boolean {
  if (requestHost === configuredHost) return true;
  return LOOPBACK_NAMES.has(requestHost) && LOOPBACK_NAMES.has(configuredHost);
}

function isLockPath(path: string): boolean {
  return path === "/pools" || path.startsWith("/pools/");
}

/**
 * Decides which app serves a request. Order: the base and lock hosts first (exact names win
 * over the pool wildcard), then `<label>.<poolDomain>`. On the lock host only `/pools/*` goes
 * to the lock app; the rest goes to the control app when the base and lock hosts are the same.
 * On a base host apart from the lock host, `/pools/*` is nobody's (a 404 in the lock shape).
 * A request with no Host (HTTP/1.0) reaches only `/healthz` and `/readyz`.
 *
 * @example
 * ```ts
 * const route = createRouteResolver({ baseUrl: "http://localhost:8080", lockUrl: "http://localhost:8080", poolDomain: "pools.localhost" });
 * route("chat.pools.localhost:8080", "/v1/chat"); // "proxy"
 * ```
 */
export function createRouteResolver(
  options: Pick<HostRouterOptions, "baseUrl" | "lockUrl" | "poolDomain">,
): (hostHeader: string, path: string) => RouteTarget {
  const baseHost = hostWithoutPort(new URL(options.baseUrl).host);
  const lockHost = hostWithoutPort(new URL(options.lockUrl).host);
  const poolSuffix = `.${options.poolDomain.toLowerCase()}`;
  return (hostHeader, path) => {
    // Load balancers' health checks often speak HTTP/1.0 without Host: they reach the
    // liveness and readiness probes, and nothing else.
    if (hostHeader === "") return HOSTLESS_PATHS.has(path) ? "control" : "none";
    const host = hostWithoutPort(hostHeader);
    const onBase = sameHost(host, baseHost);
    if (sameHost(host, lockHost)) {
      if (isLockPath(path)) return "lock";
      return onBase ? "control" : "none";
    }
    // A lock path off the lock host is a lock client at the wrong URL: it gets the Lock API's
    // 404 (the Control API serves nothing under /pools there anyway).
    if (onBase) return isLockPath(path) ? "none" : "control";
    if (host.endsWith(poolSuffix)) {
      const label = host.slice(0, -poolSuffix.length);
      return POOL_LABEL.test(label) ? "proxy" : "none";
    }
    return "none";
  };
}

/**
 * The Lock API's error shape. An unknown host is most often a server reached by another name
 * than its base URL (a LAN address, a proxy), so the message says how routing works.
 */
function notFound(target: RouteTarget): Response {
  const message =
    target === "none"
      ? "Nothing is served at this host name and path. Sluice routes requests by their Host " +
        "header: the server's --base-url, --lock-url and --pool-domain name the hosts it serves."
      : "Not found.";
  return Response.json({ error: "not_found", message }, { status: 404 });
}

/**
 * One Hono app in front of the control, lock and proxy apps, routing by Host header (see
 * {@link createRouteResolver}). Unknown hosts, and lock or pool hosts whose app is not
 * mounted, answer 404 `{ "error": "not_found", "message": … }`.
 *
 * @example
 * ```ts
 * const app = createHostRouter({ baseUrl, lockUrl, poolDomain: "pools.localhost", controlApp });
 * await app.request("/api/v1/me", { headers: { host: "localhost:8080" } });
 * ```
 */
export function createHostRouter(options: HostRouterOptions): Hono {
  const resolve = createRouteResolver(options);
  const apps: Record<Exclude<RouteTarget, "none">, FetchApp | undefined> = {
    control: options.controlApp,
    lock: options.lockApp,
    proxy: options.proxyApp,
  };
  const dispatch = (request: Request, env: unknown, path: string) => {
    const target = resolve(hostOf(request, env), path);
    const app = target === "none" ? undefined : apps[target];
    if (!app) return notFound(target);
    // A held-back 100 Continue: the proxy sends it itself, once the caller may upload.
    if (target !== "proxy") continueIfExpected(env);
    return app.fetch(request, env);
  };
  const router = new Hono();
  router.all("*", (c) => dispatch(c.req.raw, c.env, c.req.path));
  // Every request passes here, so the common case skips Hono's dispatch: a request whose
  // path has no escapes (Hono decodes those) and that is not a HEAD (Hono strips its body).
  const routed = router.fetch;
  router.fetch = (request, env, executionContext) => {
    const url = request.url;
    if (request.method === "HEAD" || url.includes("%")) {
      return routed(request, env, executionContext);
    }
    try {
      const response = dispatch(request, env, pathOf(url));
      return response instanceof Promise ? response.catch(internalError) : response;
    } catch (error) {
      return internalError(error);
    }
  };
  return router;
}

/**
 * The request's `Host`: read from the Node request's raw headers on `@hono/node-server`
 * (building a web `Headers` just for this costs more than the routing), else from the web
 * request (the URL's host when it has none). Repeated fields are joined like `Headers.get`.
 */
function hostOf(request: Request, env: unknown): string {
  const raw = (env as { incoming?: { rawHeaders?: readonly string[] } } | undefined)?.incoming
    ?.rawHeaders;
  let host: string | null = null;
  if (raw) {
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i] as string;
      if (name.length !== 4 || name.toLowerCase() !== "host") continue;
      const value = (raw[i + 1] as string).trim();
      host = host === null ? value : `${host}, ${value}`;
    }
    // No Host at all (HTTP/1.0 allows that): a host nothing is served at, not the URL's
    // host, which the adapter made up from its own defaults.
    return host ?? "";
  }
  return request.headers.get("host") ?? new URL(request.url).host;
}

/** The path of an absolute URL without escapes, up to the query (Hono's `c.req.path` then). */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf(":") + 4);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  return query < 0 ? url.slice(start) : url.slice(start, query);
}

/** What Hono answers when an app throws (the mounted apps answer their own errors). */
function internalError(error: unknown): Response {
  console.error(error);
  return new Response("Internal Server Error", { status: 500 });
}
