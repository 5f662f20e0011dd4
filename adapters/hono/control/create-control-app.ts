import { Hono } from "hono";
import { BODY_TIMEOUT_MS } from "../lock/request-body.js";
import { receivedPathProblem } from "../received-path.js";
import { allowedMethods } from "./allowed-methods.js";
import type { ControlAppDeps, ControlEnv, ControlRouteDeps } from "./control-env.js";
import { controlErrorResponse, logToConsole } from "./error-response.js";
import { openApiHandler } from "./openapi-route.js";
import { DEFAULT_MAX_BODY_BYTES } from "./request-input.js";
import { budgetRoutes } from "./routes/budget-routes.js";
import { meRoutes } from "./routes/me-routes.js";
import { poolKeyRoutes } from "./routes/pool-key-routes.js";
import { poolMetricsRoutes } from "./routes/pool-metrics-routes.js";
import { poolRoutes } from "./routes/pool-routes.js";

/** Path prefix of every Control API route (contract section 4.1). */
export const CONTROL_API_PREFIX = "/api/v1";

/**
 * The Control API (contract section 4.1) as a Hono app: budgets, pools, pool keys and pool
 * metrics under `/api/v1`, authenticated by bearer API token with per-endpoint abilities,
 * plus its OpenAPI 3.1 document at `GET /api/v1/openapi.json` (no auth).
 *
 * Errors are JSON `{message}` (422 adds `errors`); unknown routes are 404, a known path asked
 * with another method 405 with `Allow`; bugs are a bare 500 and go to `deps.logError`.
 *
 * @example
 * ```ts
 * import { serve } from "@hono/node-server";
 * const app = createControlApp({ catalog, metrics: governor.metrics, clock: systemClock });
 * serve({ fetch: app.fetch, port: 8080 });
 * ```
 */
export function createControlApp(deps: ControlAppDeps): Hono<ControlEnv> {
  const routeDeps: ControlRouteDeps = {
    catalog: deps.catalog,
    metrics: deps.metrics,
    clock: deps.clock ?? deps.catalog.clock,
    bodyLimits: {
      maxBytes: deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      timeoutMs: deps.bodyTimeoutMs ?? BODY_TIMEOUT_MS,
    },
  };
  const logError = deps.logError ?? logToConsole;

  const api = new Hono<ControlEnv>();
  api.get("/openapi.json", openApiHandler(deps.publicUrl));
  api.route("/", meRoutes(routeDeps));
  api.route("/", budgetRoutes(routeDeps));
  api.route("/", poolRoutes(routeDeps));
  api.route("/", poolKeyRoutes(routeDeps));
  api.route("/", poolMetricsRoutes(routeDeps));

  const app = new Hono<ControlEnv>();
  app.use(async (c, next) => {
    // An escaped dot segment would be resolved away and served as another route.
    const problem = receivedPathProblem(c.req.raw, c.env);
    if (problem !== null) {
      c.header("Cache-Control", "no-store");
      return c.json({ message: `Ambiguous path: ${problem}.` }, 400);
    }
    await next();
    // Responses carry account data and, once, secrets: no cache may keep them.
    c.header("Cache-Control", "no-store");
  });
  app.route(CONTROL_API_PREFIX, api);
  let allowedOn: ((path: string) => string[]) | undefined;
  app.notFound((c) => {
    allowedOn ??= allowedMethods(app.routes);
    const allowed = allowedOn(c.req.path);
    if (allowed.length === 0) return c.json({ message: "Not found." }, 404);
    const message = `${c.req.method} is not allowed here; use ${listWithOr(allowed)}.`;
    return c.json({ message }, 405, { Allow: allowed.join(", ") });
  });
  app.onError((error, c) => controlErrorResponse(error, c, logError));
  return app;
}

/** `["GET", "HEAD", "POST"]` → `"GET, HEAD or POST"`: the methods as a sentence reads them. */
function listWithOr(items: readonly string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}
