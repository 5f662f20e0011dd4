import { createHash, timingSafeEqual } from "node:crypto";
import type { FetchApp } from "./host-router.js";
import type { PrometheusMetrics } from "./prometheus-metrics.js";

/**
 * One part readiness depends on, and how it stands: "ok", "ok (…)" (ready, with a remark),
 * or what is wrong.
 */
export type ReadinessChecks = Readonly<Record<string, string>>;

/** Options of {@link withOpsRoutes}. */
export interface OpsRoutesOptions {
  /** The Control API: every other path of the base host. */
  controlApp: FetchApp;
  metrics: PrometheusMetrics;
  /** When set, `/metrics` needs `Authorization: Bearer <metricsToken>`. */
  metricsToken?: string | undefined;
  /** Each part readiness depends on, checked now. */
  readiness: () => Promise<ReadinessChecks>;
}

const OPS_PATHS = new Set(["/metrics", "/healthz", "/readyz"]);

/**
 * The operations endpoints on the base host, in front of the Control API (pool hosts never
 * serve them: their paths belong to the origin):
 * - `GET /metrics`: Prometheus text; with a metrics token, only for `Authorization: Bearer <token>`.
 * - `GET /healthz`: 200 while the process serves requests at all.
 * - `GET /readyz`: 200 when every readiness check is ok, else 503 naming the failing parts.
 *
 * @example
 * ```ts
 * const control = withOpsRoutes({ controlApp, metrics, readiness: async () => ({ catalog: "ok" }) });
 * ```
 */
export function withOpsRoutes(options: OpsRoutesOptions): FetchApp {
  const { controlApp, metrics } = options;
  const expected = options.metricsToken === undefined ? null : digest(options.metricsToken);
  const routes: Record<string, () => Promise<Response> | Response> = {
    "/healthz": () => Response.json({ status: "ok" }),
    "/readyz": async () => {
      const checks = await options.readiness();
      const failing = Object.keys(checks).filter((part) => !isPassing(checks[part] as string));
      if (failing.length === 0) return Response.json({ status: "ready", checks });
      const message = `Not ready: ${failing.map((part) => `${part} ${checks[part]}`).join(", ")}.`;
      return Response.json({ status: "not_ready", message, failing, checks }, { status: 503 });
    },
    "/metrics": async () =>
      new Response(await metrics.scrape(), { headers: { "content-type": metrics.contentType } }),
  };
  return {
    fetch(request, env) {
      const path = new URL(request.url).pathname;
      if (!OPS_PATHS.has(path)) return controlApp.fetch(request, env);
      if (request.method !== "GET" && request.method !== "HEAD") {
        return Response.json(
          { message: `${path} answers GET only.` },
          { status: 405, headers: { allow: "GET, HEAD" } },
        );
      }
      if (path === "/metrics" && expected !== null && !presentsToken(request, expected)) {
        return Response.json(
          { message: "/metrics needs Authorization: Bearer <metrics token>." },
          { status: 401, headers: { "www-authenticate": 'Bearer realm="metrics"' } },
        );
      }
      return (routes[path] as () => Promise<Response> | Response)();
    },
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Compared as digests in constant time: neither the token nor its length leaks by timing. */
function presentsToken(request: Request, expected: Buffer): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(request.headers.get("authorization") ?? "");
  return match !== null && timingSafeEqual(digest(match[1] as string), expected);
}

/** "ok", or "ok (…)": ready, with a remark (a part that is degraded but serving). */
function isPassing(check: string): boolean {
  return check === "ok" || check.startsWith("ok (");
}
