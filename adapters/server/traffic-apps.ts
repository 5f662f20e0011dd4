import { MemoryNonceStore, type NonceStore } from "../../src/policies/nonce-store.js";
import { createLockApp } from "../hono/lock/create-lock-app.js";
import { CatalogPoolDirectory, type PoolDirectory } from "../hono/lock/pool-directory.js";
import { createProxyApp } from "../hono/proxy/create-proxy-app.js";
import { lazyPostgresPools } from "../postgres-pool/lazy-postgres-pools.js";
import type { ServerAppDeps } from "./create-server.js";
import type { FetchApp } from "./host-router.js";

/** What the server gives the factories (the server owns and closes the access log). */
export type TrafficServerDeps = ServerAppDeps;

// The server calls both factories with one deps object: both apps then share one catalog
// cache (and the server's one access log).
const directories = new WeakMap<object, PoolDirectory>();

function sharedDirectory(deps: TrafficServerDeps): PoolDirectory {
  let directory = directories.get(deps);
  if (!directory) {
    directory = new CatalogPoolDirectory(deps.catalog);
    directories.set(deps, directory);
  }
  return directory;
}

const nonceStores = new WeakMap<object, NonceStore>();

/** The server's nonce store, or one memory store both apps share. */
function sharedNonces(deps: TrafficServerDeps): NonceStore {
  if (deps.nonces) return deps.nonces;
  let nonces = nonceStores.get(deps);
  if (!nonces) {
    nonces = new MemoryNonceStore({ now: () => deps.clock.now() });
    nonceStores.set(deps, nonces);
  }
  return nonces;
}

/** Faults and origin failures go to the server's log, with their request. */
function failureReporting(deps: TrafficServerDeps) {
  const report = deps.reportFailure;
  if (!report) return {};
  return {
    logError: (error: unknown, request?: Request) => report(request, error),
    onOriginFailure: (request: Request, cause: Error) => report(request, cause),
  };
}

/**
 * Origins whose pages may call the Lock API and `/sql`: the server's own pages (its base and
 * lock URLs, also behind a TLS proxy) and the operator's list.
 */
function webOrigins(deps: TrafficServerDeps): string[] {
  return [
    new URL(deps.config.baseUrl).origin,
    new URL(deps.config.lockUrl).origin,
    ...deps.config.corsOrigins,
  ];
}

/**
 * The Lock API as a server app factory (for `createSluiceServer`'s `lockApp`).
 *
 * @example
 * ```ts
 * const server = await createSluiceServer(config, { lockApp: lockAppForServer, proxyApp: proxyAppForServer });
 * ```
 */
export function lockAppForServer(deps: TrafficServerDeps): FetchApp {
  return createLockApp({
    governor: deps.governor,
    catalog: deps.catalog,
    clock: deps.clock,
    accessLog: deps.accessLog,
    directory: sharedDirectory(deps),
    corsOrigins: webOrigins(deps),
    trustedProxies: deps.config.trustedProxies,
    jwksTimeoutMs: deps.config.jwksTimeoutMs,
    jwksNetwork: deps.config.jwksNetwork,
    nonces: sharedNonces(deps),
    ...failureReporting(deps),
  });
}

/**
 * The pool proxy as a server app factory (for `createSluiceServer`'s `proxyApp`); database
 * pools are served through node-postgres connection pools (loaded on first use), closed
 * with the app.
 *
 * @example
 * ```ts
 * const server = await createSluiceServer(config, { lockApp: lockAppForServer, proxyApp: proxyAppForServer });
 * ```
 */
export function proxyAppForServer(deps: TrafficServerDeps): FetchApp {
  return createProxyApp({
    governor: deps.governor,
    catalog: deps.catalog,
    clock: deps.clock,
    poolDomain: deps.config.poolDomain,
    accessLog: deps.accessLog,
    directory: sharedDirectory(deps),
    trustedProxies: deps.config.trustedProxies,
    jwksTimeoutMs: deps.config.jwksTimeoutMs,
    jwksNetwork: deps.config.jwksNetwork,
    nonces: sharedNonces(deps),
    sql: { runner: lazyPostgresPools(), corsOrigins: webOrigins(deps) },
    ...failureReporting(deps),
  });
}
