import type { CatalogService } from "../../../src/catalog/catalog-service.js";
import type { AuthenticatedToken } from "../../../src/catalog/tokens.js";
import type { Clock } from "../../../src/clock/clock.js";
import type { MetricsRecorder } from "../../../src/metrics/recorder.js";
import type { BodyLimits } from "../lock/request-body.js";

/**
 * What a 500 reports to the log: where it happened and the error. Never request headers or
 * bodies, which carry tokens and keys.
 *
 * @example
 * ```ts
 * createControlApp({ ...deps, logError: ({ method, path, error }) => logger.error({ method, path }, error) });
 * ```
 */
export interface ServerErrorReport {
  method: string;
  /** Path without the query string. */
  path: string;
  error: unknown;
  /** The request that failed (a server's log finds its request id and pool with it). */
  request?: Request;
}

/**
 * Dependencies of {@link createControlApp}.
 *
 * @example
 * ```ts
 * const deps: ControlAppDeps = { catalog, metrics: governor.metrics, clock: systemClock };
 * ```
 */
export interface ControlAppDeps {
  /** Teams, tokens, budgets, pools and keys. */
  catalog: CatalogService;
  /** The governor's metrics, keyed by pool subdomain. */
  metrics: MetricsRecorder;
  /** "Now" for metrics ranges; default: the catalog's clock. */
  clock?: Clock;
  /** Largest accepted request body in bytes; default 16 KiB. Larger bodies get 413. */
  maxBodyBytes?: number;
  /** How long a request body may take to arrive; default 10 s. A slower one gets 408. */
  bodyTimeoutMs?: number;
  /** Where 5xx errors are reported; default `console.error`. */
  logError?: (report: ServerErrorReport) => void;
  /**
   * The URL clients reach the API under (scheme and host, e.g. `https://sluice.example.com`),
   * named as the OpenAPI document's server; default: the origin each request came to.
   */
  publicUrl?: string;
}

/**
 * {@link ControlAppDeps} with every default applied, as the route modules receive them.
 *
 * @example
 * ```ts
 * api.route("/", poolRoutes({ catalog, metrics, clock, bodyLimits: { maxBytes: 16_384 } }));
 * ```
 */
export interface ControlRouteDeps {
  catalog: CatalogService;
  metrics: MetricsRecorder;
  clock: Clock;
  bodyLimits: BodyLimits;
}

/**
 * Hono variables set by {@link apiTokenAuth}: the authenticated token, its user and team.
 *
 * @example
 * ```ts
 * const teamId = c.var.auth.team.id;
 * ```
 */
export interface ApiTokenVariables {
  auth: AuthenticatedToken;
}

/**
 * The Hono environment of Control API routes.
 *
 * @example
 * ```ts
 * const routes = new Hono<ControlEnv>();
 * ```
 */
export interface ControlEnv {
  Variables: ApiTokenVariables;
}
