import { randomBytes } from "node:crypto";
import { createDashboardApp } from "../../adapters/dashboard/index.js";
import { createCatalogSync } from "../../adapters/server/catalog-sync.js";
import { createSqliteAccessLog } from "../../adapters/sqlite/access-log-store.js";
import { openSluiceDatabase } from "../../adapters/sqlite/database.js";
import { SqliteAuthStore } from "../../adapters/sqlite/sqlite-auth-store.js";
import { SqliteCatalogStore } from "../../adapters/sqlite/sqlite-catalog-store.js";
import { AuthService } from "../../src/auth/auth-service.js";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import { MetricsRecorder } from "../../src/metrics/recorder.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";
import { TEST_PASSWORD_COST } from "../auth/fixtures.js";
import { poolInput } from "../control-api/harness.js";
import { type Listening, listen } from "../lock-api/harness.js";

export const BASE_URL = "http://localhost:8080";
export const PASSWORD = "correct horse battery";

/** A parsed page response. */
export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

export interface PageOptions {
  cookie?: string;
  /** Posted as a form (`application/x-www-form-urlencoded`) with the dashboard's Origin. */
  form?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  method?: string;
  /** Sent verbatim (with the `headers` given), instead of `form`. */
  body?: string;
}

/** Options of the dashboard harnesses. */
export interface DashboardHarnessOptions {
  /** Serve the dashboard on a real socket (127.0.0.1, a free port) and send every request there. */
  socket?: boolean;
}

/**
 * The dashboard over a real (in-memory) SQLite catalog and auth store, a governor kept in
 * sync with the catalog, and a manual clock; no team yet (first-run setup).
 */
export async function startEmptyDashboard(options: DashboardHarnessOptions = {}) {
  const clock = new ManualClock(Date.UTC(2030, 0, 15, 12));
  const database = openSluiceDatabase(":memory:");
  const store = new SqliteCatalogStore({ database, clock });
  const catalog = new CatalogService({ store, secretBox: new SecretBox(randomBytes(32)), clock });
  const auth = new AuthService({
    store: new SqliteAuthStore(database),
    catalog: store,
    clock,
    passwordCost: TEST_PASSWORD_COST,
  });
  const metrics = new MetricsRecorder();
  const governor = createGovernor({ store: new MemorySlotStore({ clock }), clock, metrics });
  const accessLog = createSqliteAccessLog(database, { clock });
  const sync = createCatalogSync({ store, governor, clock });

  const app = createDashboardApp({
    catalog,
    auth,
    governor,
    metrics,
    accessLog,
    clock,
    baseUrl: BASE_URL,
    lockUrl: BASE_URL,
    poolDomain: "pools.localhost",
    syncCatalog: () => sync.syncNow(),
    remoteAddress: (c) => c.req.header("x-test-address") ?? null,
    logError: (error) => {
      throw error;
    },
  });

  const served: Listening | null = options.socket ? await listen(app.fetch) : null;

  async function request(path: string, options: PageOptions = {}): Promise<PageResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.cookie) headers.cookie = options.cookie;
    let body: string | undefined = options.body;
    if (options.form) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(options.form)) {
        for (const item of Array.isArray(value) ? value : [value]) params.append(name, item);
      }
      body = params.toString();
      headers["content-type"] ??= "application/x-www-form-urlencoded";
      headers.origin ??= BASE_URL;
    }
    const init = { method: options.method ?? (options.form ? "POST" : "GET"), headers, body };
    const response = served
      ? await fetch(`${served.url}${path}`, { ...init, redirect: "manual" })
      : await app.request(`${BASE_URL}${path}`, init);
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      location: response.headers.get("location"),
    };
  }

  return {
    app,
    request,
    clock,
    store,
    catalog,
    auth,
    governor,
    metrics,
    accessLog,
    sync,
    async close() {
      await served?.close();
      await governor.close();
      await accessLog.close();
      database.close();
    },
  };
}

/**
 * The dashboard over a real (in-memory) SQLite catalog and auth store, a governor kept in
 * sync with the catalog, and a manual clock. Two teams: Acme (owner Ada, admin Bo, member
 * Cy; budget LLM with pool `llm`, pool `open` in no budget) and Globex (owner Gus, pool
 * `globex-llm`).
 */
export async function startDashboard(options: DashboardHarnessOptions = {}) {
  const empty = await startEmptyDashboard(options);
  const { catalog, store, sync } = empty;
  const acme = await catalog.createTeamWithOwner({
    teamName: "Acme",
    slug: "acme",
    ownerName: "Ada",
    ownerEmail: "ada@acme.test",
  });
  const admin = (
    await catalog.addMember(acme.team.id, { name: "Bo", email: "bo@acme.test" }, "admin")
  ).user;
  const member = (
    await catalog.addMember(acme.team.id, { name: "Cy", email: "cy@acme.test" }, "member")
  ).user;
  const budget = await store.upsertBudget(acme.team.id, { name: "LLM", originMaxConcurrent: 10 });
  const llm = await store.upsertPool(
    acme.team.id,
    poolInput({ name: "LLM", subdomain: "llm", budgetId: budget.id, reservedConcurrent: 4 }),
  );
  const open = await store.upsertPool(
    acme.team.id,
    poolInput({ name: "Open", subdomain: "open", requireKey: false, maxConcurrent: 2 }),
  );
  const globex = await catalog.createTeamWithOwner({
    teamName: "Globex",
    slug: "globex",
    ownerName: "Gus",
    ownerEmail: "gus@globex.test",
  });
  const globexPool = await store.upsertPool(
    globex.team.id,
    poolInput({ name: "Globex", subdomain: "globex-llm" }),
  );
  await sync.syncNow();

  /** A session cookie for the user in the team (through a one-time link). */
  async function signInAs(userId: number, teamId = acme.team.id): Promise<string> {
    const { token } = await empty.auth.createSignInLink(teamId, userId);
    const response = await empty.request("/sign-in/link", { form: { token } });
    const cookie = response.headers.get("set-cookie");
    if (response.status !== 303 || !cookie)
      throw new Error(`sign-in failed: ${response.status} ${response.text}`);
    return cookie.split(";")[0]!;
  }

  return {
    ...empty,
    signInAs,
    acme: { ...acme, admin, member, budget, llm, open },
    globex: { ...globex, pool: globexPool },
  };
}

export type DashboardHarness = Awaited<ReturnType<typeof startDashboard>>;
