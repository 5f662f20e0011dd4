import type { Context } from "hono";
import type { AccessLog } from "../../src/access-log/types.js";
import type { AuthService, SignedIn } from "../../src/auth/auth-service.js";
import type { CatalogService } from "../../src/catalog/catalog-service.js";
import type { Clock } from "../../src/clock/clock.js";
import type { Governor } from "../../src/governor/types.js";
import type { MetricsRecorder } from "../../src/metrics/recorder.js";

/**
 * What the dashboard runs on: the same catalog service, governor, metrics and access log
 * as the Control API, Lock API and proxy, plus the sign-in service.
 *
 * @example
 * ```ts
 * const deps: DashboardDeps = { catalog, auth, governor, metrics, accessLog, clock, baseUrl, lockUrl, poolDomain, syncCatalog };
 * ```
 */
export interface DashboardDeps {
  catalog: CatalogService;
  auth: AuthService;
  governor: Governor;
  metrics: MetricsRecorder;
  accessLog: AccessLog;
  clock: Clock;
  /** Public URL of the dashboard and Control API; https makes the cookie `Secure` and `__Host-`. */
  baseUrl: string;
  /** Public Lock API URL, for the curl lines of a pool. */
  lockUrl: string;
  /** Pools answer at `<subdomain>.<poolDomain>`. */
  poolDomain: string;
  /**
   * The base and lock URLs as callers reach them, for the curl lines (a server started on
   * port 0 knows its port only once listening); default `baseUrl` and `lockUrl`.
   */
  publicUrls?: () => { baseUrl: string; lockUrl: string };
  /**
   * Pushes the catalog to the running governor now; called after every write, so new
   * limits apply at once rather than at the next periodic sync.
   */
  syncCatalog?: () => Promise<unknown>;
  /**
   * The client's address for sign-in throttling; default: the socket's (`@hono/node-server`).
   * Behind a load balancer, pass `clientAddressReader(trustedProxies)`.
   */
  remoteAddress?: (c: Context) => string | null;
  /** Where unexpected (5xx) errors go; default `console.error`. */
  logError?: (error: unknown) => void;
}

/** Hono variables of signed-in routes. */
export interface DashboardVariables {
  signedIn: SignedIn;
}

/** The Hono environment of dashboard routes. */
export interface DashboardEnv {
  Variables: DashboardVariables;
}

/** The context of a signed-in dashboard route. */
export type DashboardContext = Context<DashboardEnv>;
