import type Database from "better-sqlite3";
import type { Hono } from "hono";
import type { AccessLog } from "../../src/access-log/types.js";
import { AuthService } from "../../src/auth/auth-service.js";
import type { CatalogService } from "../../src/catalog/catalog-service.js";
import { type Clock, systemClock } from "../../src/clock/clock.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import type { Governor } from "../../src/governor/types.js";
import { MetricsRecorder } from "../../src/metrics/recorder.js";
import type { NonceStore } from "../../src/policies/nonce-store.js";
import { createControlApp } from "../hono/control/index.js";
import { REFUSED_BY_POLICY_HEADER } from "../hono/lock/lock-responses.js";
import { connectedAppsIn } from "../oauth/connected-apps.js";
import type { OAuthStore } from "../oauth/types.js";
import { SqliteOAuthStore } from "../sqlite/sqlite-oauth-store.js";
import { pathOf, withAssistantApp } from "./assistant-routing.js";
import { type CatalogDatabase, openCatalogDatabase } from "./catalog-database.js";
import {
  type CatalogSync,
  createCatalogSync,
  describeSync,
  type SyncReport,
} from "./catalog-sync.js";
import type { ServerConfig } from "./config.js";
import { countNoun } from "./count-noun.js";
import { createHostRouter, type FetchApp } from "./host-router.js";
import { type HttpListener, listenHttp } from "./http-listener.js";
import { createMetricsPersistence, type MetricsPersistence } from "./metrics-persistence.js";
import { nonceStoreFor } from "./nonce-store.js";
import { withOpsRoutes } from "./ops-routes.js";
import { countingAccessLog, createPrometheusMetrics } from "./prometheus-metrics.js";
import { checkReadiness } from "./readiness.js";
import { observeRequests } from "./request-log.js";
import { requestPoolResolver } from "./request-pool.js";
import { createServerAccessLog, type ServerAccessLog } from "./server-access-log.js";
import { createServerLog } from "./server-log.js";
import { lockForServing, type ServingLock } from "./serving-lock.js";
import { describeSlotStore, slotStoreFor, slotTargetOf } from "./slot-store.js";

/** What the Lock API and proxy app factories receive. */
export interface ServerAppDeps {
  governor: Governor;
  catalog: CatalogService;
  metrics: MetricsRecorder;
  /** The pool access log the Lock API and proxy append to (the server writes and closes it). */
  accessLog: AccessLog;
  clock: Clock;
  config: ServerConfig;
  /**
   * Where an app reports why a request failed (a fault, an origin failure), with the request:
   * the server logs it with the request's id and pool. Absent outside a server.
   */
  reportFailure?: (request: Request | undefined, cause: unknown) => void;
  /**
   * The server's SQLite database (migrated; the server closes it). With a PostgreSQL catalog
   * it holds nothing of Sluice's and is opened on first use.
   */
  database: Database.Database;
  /** Dashboard sign-in: passwords, sessions, one-time links (in the catalog database, SQLite or PostgreSQL). */
  auth: AuthService;
  /** Applies the catalog to the governor now (after a write that must take effect at once). */
  syncCatalog(): Promise<SyncReport>;
  /** The base and lock URLs as callers reach them: with port 0, the bound port once listening. */
  publicUrls(): { baseUrl: string; lockUrl: string };
  /** Where signed requests' nonces are remembered (Redis with `redisUrl`; the server closes it). */
  nonces?: NonceStore;
  /** Where the MCP endpoint keeps OAuth grants and tokens, when not in `database` (PostgreSQL). */
  oauthStore?: OAuthStore;
}

/** Builds an app (Lock API, pool proxy) from the server's parts. */
export type ServerAppFactory = (deps: ServerAppDeps) => FetchApp;

/** Options of {@link createSluiceServer}. */
export interface SluiceServerOptions {
  /** Lock API app, mounted at `/pools/*` on the lock URL's host. */
  lockApp?: ServerAppFactory;
  /** Pool proxy app, serving `<subdomain>.<poolDomain>`; absent: those hosts answer 404. */
  proxyApp?: ServerAppFactory;
  /** MCP endpoint and its OAuth server on the base URL (`/mcp`, `/oauth/*`, `/.well-known/oauth-*`). */
  assistantApp?: ServerAppFactory;
  /** Web dashboard on the base URL: every path the Control API, the operations endpoints and the assistant app leave. */
  dashboardApp?: ServerAppFactory;
  clock?: Clock;
  /**
   * Log lines, formatted as `config.logFormat` says: progress (start-up, syncs, shutdown),
   * an error line for every 5xx and origin failure, and with `config.logRequests` an access
   * line per request. Default: none.
   */
  log?: (line: string) => void;
}

/** Where a listening server can be reached. */
export interface ListenResult {
  /** Control API base URL (the configured `baseUrl`; with port 0, the bound port filled in). */
  url: string;
  /** Lock API base URL, the same way. */
  lockUrl: string;
  /** The port actually bound. */
  port: number;
}

/** A composed Sluice server. */
export interface SluiceServer {
  readonly config: ServerConfig;
  /** The host-routing app; `app.request()` works without listening. */
  readonly app: Hono;
  readonly governor: Governor;
  readonly catalog: CatalogService;
  readonly metrics: MetricsRecorder;
  /** Every pool's acquire attempts; `accessLog.list(subdomain)` reads one pool's, newest first. */
  readonly accessLog: AccessLog;
  /** Dashboard sign-in (sessions, passwords, one-time links). */
  readonly auth: AuthService;
  /** Binds the port and starts the metrics flush and catalog sync timers. */
  listen(): Promise<ListenResult>;
  /** Re-applies the catalog to the governor now (what SIGHUP does). */
  syncCatalog(): Promise<SyncReport>;
  /**
   * Graceful stop: no new connections, in-flight requests get `shutdownGraceMs`, then the
   * governor is closed, metrics saved and the database closed. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Composes the embedded server: the SQLite catalog and metrics in `config.dataDir`, a
 * governor (in memory, or Redis with `redisUrl`) kept in step with the catalog, and the
 * Control, Lock and proxy apps behind host routing. The data directory is locked for serving
 * until `close()` (see {@link lockForServing}): an in-memory server is refused with
 * `ConflictError` where another server runs, as each would admit every pool's full limit.
 *
 * @example
 * ```ts
 * const server = await createSluiceServer(loadServerConfig({ env: process.env }), { log: console.log });
 * const { url } = await server.listen();
 * process.once("SIGTERM", () => server.close());
 * ```
 */
export async function createSluiceServer(
  config: ServerConfig,
  options: SluiceServerOptions = {},
): Promise<SluiceServer> {
  const clock = options.clock ?? systemClock;
  const serverLog = createServerLog(config.logFormat, options.log ?? (() => {}));
  const log = (line: string) => serverLog.info(line);
  const data = await openCatalogDatabase({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    secretKey: config.secretKey,
    clock,
    log,
    backgroundCheckpoints: true,
  });
  const cleanups: (() => unknown)[] = [() => data.close()];
  try {
    const servingLock = await servingLockOf(config, data, log);
    cleanups.push(() => servingLock.release());
    log(`Catalog: ${data.description}`);
    const prometheus = createPrometheusMetrics(() => governor);
    const metrics = new MetricsRecorder({ observer: prometheus.observer });
    const persistence = createMetricsPersistence({
      recorder: metrics,
      store: data.metrics,
      catalog: data.catalog.store,
      clock,
      log,
      // In memory, a server serves its catalog alone (the serving lock): nobody else's counts.
      sharedStore: slotTargetOf(config) !== null,
    });
    const loaded = await persistence.load();
    if (loaded > 0) log(`Loaded ${countNoun(loaded, "metric bucket")}`);
    const access = createServerAccessLog({
      store: data.accessLog,
      catalog: data.catalog.store,
      clock,
      log,
    });
    cleanups.unshift(() => access.close());
    const governor = createGovernor({ store: await slotStoreFor(config, log), clock, metrics });
    cleanups.unshift(() => governor.close());
    const nonces = await nonceStoreFor(config, clock);
    cleanups.unshift(() => nonces.close?.());
    log(`Governor: ${describeSlotStore(config)}`);
    const sync = createCatalogSync({
      store: data.catalog.store,
      governor,
      clock,
      log,
      onPoolRemoved: (subdomain) =>
        forgetPoolEverywhere(subdomain, [persistence, access.accessLog, prometheus]),
    });
    log(describeSync(await sync.syncNow()));

    const poolOf = requestPoolResolver(config);
    const requestLog = observeRequests({
      log: serverLog,
      logRequests: config.logRequests,
      poolOf,
      onAuthRefusal(request, status, response) {
        // A caller policy's refusal is counted under the policy, from its access log entry.
        if (response.headers.has(REFUSED_BY_POLICY_HEADER)) return;
        const pool = poolOf(request);
        if (pool) prometheus.countAuthRefusal(pool, status === 401 ? "unauthorized" : "forbidden");
      },
    });
    // Filled in with the bound port by listen() when the configured port is 0.
    const publicUrls = { baseUrl: config.baseUrl, lockUrl: config.lockUrl };
    let oauthStore = data.oauth;
    const auth = new AuthService({
      store: data.auth,
      catalog: data.catalog.store,
      clock,
      // A member removed from a team loses the MCP clients they connected there too.
      connectedApps: connectedAppsIn(() => {
        oauthStore ??= new SqliteOAuthStore(data.localDatabase());
        return oauthStore;
      }),
    });
    const deps: ServerAppDeps = {
      governor,
      catalog: data.catalog,
      metrics,
      accessLog: countingAccessLog(access.accessLog, prometheus.countAttempt),
      clock,
      config,
      reportFailure: requestLog.reportFailure,
      // Read on use: a server on PostgreSQL then leaves no SQLite file behind.
      get database() {
        return data.localDatabase();
      },
      ...(data.oauth ? { oauthStore: data.oauth } : {}),
      auth,
      syncCatalog: () => sync.syncNow(),
      publicUrls: () => publicUrls,
      nonces,
    };
    const proxyApp = options.proxyApp?.(deps);
    const stopping = { now: false };
    const controlApp = withOpsRoutes({
      controlApp: withDashboard(
        createControlApp({
          catalog: data.catalog,
          metrics,
          clock,
          publicUrl: config.baseUrl,
          logError: (report) => requestLog.reportFailure(report.request, report.error),
        }),
        options.dashboardApp?.(deps),
      ),
      metrics: prometheus,
      metricsToken: config.metricsToken,
      readiness: () =>
        checkReadiness({
          catalog: data.catalog.store,
          ...(data.ping ? { pingCatalog: data.ping } : {}),
          slotStore: governor.store,
          sync,
          stopping: () => stopping.now,
        }),
    });
    const app = createHostRouter({
      baseUrl: config.baseUrl,
      lockUrl: config.lockUrl,
      poolDomain: config.poolDomain,
      controlApp: withAssistantApp(controlApp, options.assistantApp?.(deps)),
      lockApp: options.lockApp?.(deps),
      proxyApp,
    });
    return assemble({
      config,
      app,
      served: requestLog.observe(app),
      stopping,
      data,
      servingLock,
      governor,
      metrics,
      sync,
      persistence,
      access,
      auth,
      publicUrls,
      log,
      // The proxy's origin and database connections, once no request uses them.
      closeApps: () => (proxyApp as { close?: () => unknown } | undefined)?.close?.(),
      closeNonces: () => nonces.close?.(),
    });
  } catch (error) {
    for (const cleanup of cleanups) await cleanup();
    throw error;
  }
}

interface Parts {
  auth: AuthService;
  publicUrls: { baseUrl: string; lockUrl: string };
  config: ServerConfig;
  app: Hono;
  /** `app` with its answers logged: what the listener serves. */
  served: FetchApp;
  /** Set once shutdown begins (readiness then fails). */
  stopping: { now: boolean };
  data: CatalogDatabase;
  servingLock: ServingLock;
  governor: Governor;
  metrics: MetricsRecorder;
  sync: CatalogSync;
  persistence: MetricsPersistence;
  access: ServerAccessLog;
  log: (line: string) => void;
  closeApps: () => unknown;
  /** The nonce store's connection (Redis), once no request can claim a nonce. */
  closeNonces: () => unknown;
}

function assemble(parts: Parts): SluiceServer {
  const { config, app, data, servingLock, governor, metrics, sync, persistence, access, log } =
    parts;
  const { auth, publicUrls } = parts;
  let listener: HttpListener | null = null;
  let closing: Promise<void> | null = null;
  let stopWatching: (() => void) | null = null;

  async function shutdown(): Promise<void> {
    parts.stopping.now = true;
    // Queued callers get their answer (503) now; requests holding slots may finish.
    governor.drain();
    if (listener) {
      const waiting = listener.inFlight();
      log(
        `Stopped accepting connections; waiting up to ${config.shutdownGraceMs} ms for ${countNoun(waiting, "in-flight request")}`,
      );
      const { cutOff } = await listener.shutdown(config.shutdownGraceMs);
      log(
        cutOff > 0
          ? `Cut off ${countNoun(cutOff, "request")} still running after the grace period`
          : "All requests finished",
      );
    }
    parts.closeApps();
    persistence.stop();
    stopWatching?.();
    await sync.stop();
    await governor.close();
    await parts.closeNonces();
    log("Closed the governor");
    // After the governor: the releases of requests cut off above are counted by now.
    log(`Saved ${countNoun(await persistence.flush(), "metric bucket")}`);
    // After the governor: callers it turned away on closing are still logged.
    await access.close();
    await data.close();
    // Last: a server started next on this directory finds everything saved.
    servingLock.release();
    log("Closed the database");
  }

  return {
    config,
    app,
    governor,
    catalog: data.catalog,
    metrics,
    accessLog: access.accessLog,
    auth,
    async listen() {
      if (listener) throw new InvalidArgumentError("listen() may be called only once.");
      listener = await listenHttp({
        app: parts.served,
        hostname: config.host,
        port: config.port,
        headersTimeoutMs: config.headersTimeoutMs,
        keepAliveTimeoutMs: config.keepAliveTimeoutMs,
      });
      persistence.start(config.metricsFlushMs);
      access.startRetention();
      sync.start(config.catalogSyncMs);
      // A notified change is applied at once, not at the next tick.
      stopWatching = data.onChange?.(() => void sync.nudge()) ?? null;
      // An IPv6 address needs brackets to be read (and pasted) as host and port.
      const host = config.host.includes(":") ? `[${config.host}]` : config.host;
      log(`Listening on ${host}:${listener.port}`);
      publicUrls.baseUrl = withActualPort(config.baseUrl, listener.port);
      publicUrls.lockUrl = withActualPort(config.lockUrl, listener.port);
      return { url: publicUrls.baseUrl, lockUrl: publicUrls.lockUrl, port: listener.port };
    },
    syncCatalog: () => sync.syncNow(),
    close() {
      closing ??= shutdown();
      return closing;
    },
  };
}

/** The Control API under `/api/`, the dashboard (when mounted) on every other path. */
function withDashboard(controlApp: FetchApp, dashboardApp: FetchApp | undefined): FetchApp {
  if (!dashboardApp) return controlApp;
  return {
    fetch(request, env) {
      const path = pathOf(request.url);
      const app = path === "/api" || path.startsWith("/api/") ? controlApp : dashboardApp;
      return app.fetch(request, env);
    },
  };
}

/**
 * Drops what each holder keeps under a removed pool's subdomain. Every holder is asked even
 * when one fails, so a failing metrics delete never leaves the access log to the next pool.
 */
async function forgetPoolEverywhere(
  subdomain: string,
  holders: readonly { forgetPool(pool: string): unknown }[],
): Promise<void> {
  const results = await Promise.allSettled(
    holders.map(async (holder) => holder.forgetPool(subdomain)),
  );
  const failures = results.flatMap((result) =>
    result.status === "rejected" ? [result.reason as unknown] : [],
  );
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) {
    const messages = failures.map((error) => (error as Error).message).join("; ");
    throw new AggregateError(failures, messages);
  }
}

/** With port 0 the default base URL says `:0`; the real port is only known after binding. */
function withActualPort(baseUrl: string, port: number): string {
  const url = new URL(baseUrl);
  if (url.port !== "0") return baseUrl;
  url.port = String(port);
  return url.toString().replace(/\/$/, "");
}

/**
 * The serving lock: the data directory's (see {@link lockForServing}), or on a PostgreSQL
 * catalog, which has no directory to lock, an advisory lock there (see `lockPostgresFleet`).
 * Either way an in-memory server serves alone, and Redis servers only with one Redis target.
 */
async function servingLockOf(
  config: ServerConfig,
  data: CatalogDatabase,
  log: (line: string) => void,
): Promise<ServingLock> {
  const redisTarget = slotTargetOf(config);
  if (data.dataDir !== null) return lockForServing(data.dataDir, redisTarget);
  const { lockPostgresFleet } = await import("../postgres/index.js");
  return lockPostgresFleet(config.databaseUrl!, redisTarget, { log });
}
