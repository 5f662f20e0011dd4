import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import type Database from "better-sqlite3";
import type { Hono } from "hono";
import type { IpPolicy } from "../../adapters/hono/caller/ip-policy.js";
import type { JwksNetwork } from "../../adapters/hono/caller/key-set-fetch.js";
import { createLockApp } from "../../adapters/hono/lock/create-lock-app.js";
import { createProxyApp, type ProxyApp } from "../../adapters/hono/proxy/create-proxy-app.js";
import type { SqlServing } from "../../adapters/hono/sql/serve-sql.js";
import { createSqliteAccessLog } from "../../adapters/sqlite/access-log-store.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteCatalogStore } from "../../adapters/sqlite/sqlite-catalog-store.js";
import type { BufferedAccessLog } from "../../src/access-log/buffered-access-log.js";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { poolToGovernorSettings } from "../../src/catalog/governor-mapping.js";
import type { PoolInput, PoolRecord, TeamRecord } from "../../src/catalog/types.js";
import type { Clock } from "../../src/clock/clock.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import type { Governor } from "../../src/governor/types.js";
import { MemoryNonceStore, type NonceStore } from "../../src/policies/nonce-store.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";
import { poolInput } from "../catalog/fixtures.js";

/** Pools are served at `{subdomain}.pools.test`; requests reach them on 127.0.0.1 with a Host header. */
export const POOL_DOMAIN = "pools.test";

/** A Hono app listening on 127.0.0.1 at a free port. */
export interface Listening {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/**
 * Serves a fetch handler on a real socket (port 0).
 *
 * @example
 * ```ts
 * const served = await listen(app.fetch);
 * await fetch(`${served.url}/pools/llm/lock/acquire`, { method: "POST" });
 * ```
 */
export async function listen(
  fetchHandler: (request: Request, env?: unknown) => Response | Promise<Response>,
  hostname = "127.0.0.1",
): Promise<Listening> {
  const server = await new Promise<Server>((resolve) => {
    const created = serve({ fetch: fetchHandler, hostname, port: 0 }, () =>
      resolve(created as Server),
    ) as Server;
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Options of {@link createHarness}. */
export interface HarnessOptions {
  /** A ManualClock by default (governor, catalog and access log share it). */
  clock?: Clock;
  ipPolicy?: IpPolicy;
  /** Proxies whose X-Forwarded-For hop pools' IP allowlists believe (default none). */
  trustedProxies?: readonly string[];
  /** Nonce store of both apps (default one memory store they share). */
  nonces?: NonceStore;
  /** The Lock API's body timeout (default 10 s). */
  bodyTimeoutMs?: number;
  /** Web origins the Lock API admits besides the request's own (default none). */
  corsOrigins?: readonly string[];
  /** How the proxy serves database pools (none: they answer 501). */
  sql?: SqlServing;
  /** How long both apps wait for a JWKS URL (default 5 s). */
  jwksTimeoutMs?: number;
  /** Where both apps may fetch JWKS URLs (default `public`: a key server on 127.0.0.1 is refused). */
  jwksNetwork?: JwksNetwork;
}

/**
 * A real SQLite catalog in a temp dir, a governor, an access log, and the Lock API and the
 * proxy on real sockets.
 */
export interface Harness {
  clock: Clock;
  manualClock: ManualClock | null;
  database: Database.Database;
  catalog: CatalogService;
  governor: Governor;
  accessLog: BufferedAccessLog;
  team: TeamRecord;
  /** A Control API token of the team (plaintext), to show it is no pool key. */
  mintApiToken(): Promise<string>;
  /** What the Lock API and the proxy logged as server errors (their `logError`). */
  loggedErrors: unknown[];
  /** What the proxy reported as origin (or database) failures (its `onOriginFailure`). */
  originFailures: Error[];
  lock: Listening;
  proxy: Listening;
  /** The Lock API app served at `lock` (to mount it behind something else too). */
  lockApp: Hono;
  proxyApp: ProxyApp;
  /** Creates (or updates) a pool in the catalog and defines it in the governor. */
  addPool(overrides?: Partial<PoolInput>): Promise<PoolRecord>;
  /** Mints a key; returns its plaintext and record. */
  mintKey(
    subdomain: string,
    options?: { access?: "read" | "write"; expiresPreset?: string },
  ): ReturnType<CatalogService["mintPoolKey"]>;
  /** POST to a Lock API path. */
  lockPost(
    path: string,
    init?: { key?: string; headers?: Record<string, string>; body?: string | Uint8Array },
  ): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Builds a {@link Harness}; call `close()` in `afterEach`.
 *
 * @example
 * ```ts
 * const h = await createHarness();
 * const pool = await h.addPool({ maxConcurrent: 1 });
 * ```
 */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const manualClock = options.clock ? null : new ManualClock();
  const clock = options.clock ?? (manualClock as ManualClock);
  const dir = mkdtempSync(join(tmpdir(), "sluice-lock-"));
  const database = openSluiceDatabase(join(dir, "sluice.db"));
  const store = new SqliteCatalogStore({ database, clock });
  const catalog = new CatalogService({ store, secretBox: new SecretBox(randomBytes(32)), clock });
  const governor = createGovernor({ clock, store: new MemorySlotStore({ clock }) });
  const accessLog = createSqliteAccessLog(database, { clock });
  const { team, owner } = await catalog.createTeamWithOwner({
    teamName: "Acme",
    slug: "acme",
    ownerName: "Ada",
    ownerEmail: "ada@acme.test",
  });
  const loggedErrors: unknown[] = [];
  const nonces = options.nonces ?? new MemoryNonceStore({ now: () => clock.now() });
  const logError = (error: unknown) => loggedErrors.push(error);
  const originFailures: Error[] = [];
  const lockApp = createLockApp({
    governor,
    catalog,
    accessLog,
    ipPolicy: options.ipPolicy,
    trustedProxies: options.trustedProxies,
    nonces,
    logError,
    ...(options.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: options.bodyTimeoutMs }),
    corsOrigins: options.corsOrigins,
    ...(options.jwksTimeoutMs === undefined ? {} : { jwksTimeoutMs: options.jwksTimeoutMs }),
    ...(options.jwksNetwork === undefined ? {} : { jwksNetwork: options.jwksNetwork }),
  });
  const proxyApp = createProxyApp({
    governor,
    catalog,
    accessLog,
    poolDomain: POOL_DOMAIN,
    ipPolicy: options.ipPolicy,
    trustedProxies: options.trustedProxies,
    nonces,
    logError,
    onOriginFailure: (_request, cause) => originFailures.push(cause),
    ...(options.sql ? { sql: options.sql } : {}),
    ...(options.jwksTimeoutMs === undefined ? {} : { jwksTimeoutMs: options.jwksTimeoutMs }),
    ...(options.jwksNetwork === undefined ? {} : { jwksNetwork: options.jwksNetwork }),
  });
  const lock = await listen(lockApp.fetch);
  const proxy = await listen(proxyApp.fetch);

  return {
    clock,
    manualClock,
    database,
    catalog,
    governor,
    accessLog,
    team,
    loggedErrors,
    originFailures,
    lock,
    proxy,
    lockApp,
    proxyApp,
    async addPool(overrides = {}) {
      const pool = await store.upsertPool(
        team.id,
        poolInput({ origin: "http://127.0.0.1:9", ...overrides }),
      );
      await governor.definePool(pool.subdomain, poolToGovernorSettings(pool, null));
      return pool;
    },
    async mintApiToken() {
      return (
        await catalog.createApiToken({
          teamId: team.id,
          actorUserId: owner.id,
          name: "test",
          abilities: ["pools:read"],
          lifetime: "1y",
        })
      ).plaintext;
    },
    async mintKey(subdomain, keyOptions = {}) {
      return await catalog.mintPoolKey({ teamId: team.id, subdomain, ...keyOptions });
    },
    lockPost(path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      if (init.key) headers["x-svc-key"] = init.key;
      if (init.body !== undefined) headers["content-type"] ??= "application/json";
      return fetch(`${lock.url}${path}`, { method: "POST", headers, body: init.body });
    },
    async close() {
      await lock.close();
      await proxy.close();
      proxyApp.close();
      await accessLog.close();
      await governor.close();
      database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Polls `condition` (real time, 2 ms steps) until it holds; fails after `timeoutMs`.
 * For socket tests, where a request must reach the governor before the clock moves.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 3_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("waitFor: condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The JSON fields of Lock API answers that the tests read. */
export interface LockBody {
  slotId: string;
  leaseDeadline: number;
  requestDeadline: number;
  termMs: number;
  renewIntervalMs: number;
  released: boolean;
  ignored: string[];
  error: string;
  message: string;
  url: string;
}

/** A response's JSON body, typed for the assertions of these tests. */
export function readBody(response: Response): Promise<LockBody> {
  return response.json() as Promise<LockBody>;
}
