import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { type ControlAppDeps, createControlApp } from "../../adapters/hono/index.js";
import { SqliteCatalogStore } from "../../adapters/sqlite/sqlite-catalog-store.js";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { MemoryCatalogStore } from "../../src/catalog/memory-catalog-store.js";
import {
  ABILITIES,
  type Ability,
  type CatalogStore,
  type PoolInput,
} from "../../src/catalog/types.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { MetricsRecorder } from "../../src/metrics/recorder.js";

/** 2030-01-15T12:00:00Z: far enough ahead that "now" in tests is never the wall clock. */
export const START = Date.UTC(2030, 0, 15, 12);

/** A complete, valid pool input; override what a test is about. */
export function poolInput(overrides: Partial<PoolInput> = {}): PoolInput {
  return {
    name: "LLM",
    description: null,
    subdomain: "llm",
    backend: "http",
    origin: "https://api.example.test",
    maxConcurrent: 8,
    queueSize: 4,
    queueTimeoutMs: 20_000,
    rpm: null,
    requestTimeoutMs: 120_000,
    termMs: 30_000,
    renewIntervalMs: 10_000,
    adaptive: true,
    requireKey: true,
    allowAuthorizationHeader: false,
    credential: null,
    database: null,
    originSigning: false,
    readMethods: [],
    readPaths: null,
    callerPolicies: null,
    budgetId: null,
    reservedConcurrent: 0,
    metricsRetentionDays: 30,
    ...overrides,
  };
}

/** A parsed JSON body; tests assert its shape. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions.
export type Json = any;

export type StoreKind = "memory" | "sqlite";

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  body: Json;
}

export interface CallOptions {
  token?: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent verbatim. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

/**
 * A running Control API on a real socket (127.0.0.1, ephemeral port) over the real catalog
 * service, with two organizations:
 * - Acme: budget "LLM" (ceiling 40) with pools `llm` (reserves 10, credential, origin
 *   signing, path-scoped POST reads) and `embed` (reserves 5); pool `open` outside any
 *   budget; postgres pool `warehouse`; budget "Empty" with no pools.
 * - Globex: budget "Globex LLM" with pool `globex-llm` and a key.
 */
export async function startControlApi(
  kind: StoreKind,
  options: Partial<Omit<ControlAppDeps, "catalog" | "metrics" | "clock">> = {},
) {
  const clock = new ManualClock(START);
  const dataDir = kind === "sqlite" ? mkdtempSync(join(tmpdir(), "sluice-control-api-")) : null;
  const databaseFile = dataDir === null ? null : join(dataDir, "sluice.db");
  const store: CatalogStore =
    databaseFile === null
      ? new MemoryCatalogStore({ clock })
      : new SqliteCatalogStore({ filename: databaseFile, clock });
  const secretBox = new SecretBox(randomBytes(32));
  const catalog = new CatalogService({ store, secretBox, clock });
  const metrics = new MetricsRecorder();

  const acme = await catalog.createTeamWithOwner({
    teamName: "Acme",
    slug: "acme",
    ownerName: "Ada",
    ownerEmail: "ada@acme.test",
  });
  const llmBudget = await store.upsertBudget(acme.team.id, {
    name: "LLM",
    originMaxConcurrent: 40,
  });
  const emptyBudget = await store.upsertBudget(acme.team.id, {
    name: "Empty",
    originMaxConcurrent: null,
  });
  const llm = await store.upsertPool(
    acme.team.id,
    poolInput({
      name: "LLM",
      description: "Chat completions",
      subdomain: "llm",
      budgetId: llmBudget.id,
      reservedConcurrent: 10,
      credential: catalog.sealCredential("authorization", "Bearer sk-upstream-secret"),
      originSigning: true,
      readMethods: ["POST"],
      readPaths: { POST: ["/v1/embeddings"] },
    }),
  );
  const embed = await store.upsertPool(
    acme.team.id,
    poolInput({ name: "Embed", subdomain: "embed", budgetId: llmBudget.id, reservedConcurrent: 5 }),
  );
  const open = await store.upsertPool(
    acme.team.id,
    poolInput({ name: "Open", subdomain: "open", requireKey: false, metricsRetentionDays: 7 }),
  );
  const warehouse = await store.upsertPool(
    acme.team.id,
    poolInput({ name: "Warehouse", subdomain: "warehouse", backend: "postgres" }),
  );

  const globex = await catalog.createTeamWithOwner({
    teamName: "Globex",
    slug: "globex",
    ownerName: "Gus",
    ownerEmail: "gus@globex.test",
  });
  const globexBudget = await store.upsertBudget(globex.team.id, {
    name: "Globex LLM",
    originMaxConcurrent: 12,
  });
  const globexPool = await store.upsertPool(
    globex.team.id,
    poolInput({ name: "Globex LLM", subdomain: "globex-llm", budgetId: globexBudget.id }),
  );
  const globexKey = await catalog.mintPoolKey({
    teamId: globex.team.id,
    subdomain: "globex-llm",
    label: "globex prod",
  });

  async function token(
    team: "acme" | "globex",
    abilities: readonly Ability[],
    name = "test",
  ): Promise<string> {
    const owner = team === "acme" ? acme : globex;
    return (
      await catalog.createApiToken({
        teamId: owner.team.id,
        actorUserId: owner.owner.id,
        name,
        abilities,
        lifetime: "1y",
      })
    ).plaintext;
  }

  const app = createControlApp({ catalog, metrics, clock, ...options });
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve, reject) => {
    if (server.listening) resolve();
    server.once("listening", () => resolve());
    server.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;

  async function call(method: string, path: string, callOptions: CallOptions = {}) {
    const headers: Record<string, string> = { accept: "application/json", ...callOptions.headers };
    if (callOptions.token !== undefined) headers.authorization = `Bearer ${callOptions.token}`;
    let body: string | Uint8Array | undefined = callOptions.rawBody;
    if (callOptions.json !== undefined) {
      body = JSON.stringify(callOptions.json);
      headers["content-type"] ??= "application/json";
    }
    const response = await fetch(baseUrl + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: parsed,
    } as ApiResponse;
  }

  async function close(): Promise<void> {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    try {
      await store.close();
    } catch {
      // Some tests close the store on purpose.
    }
    if (dataDir !== null) rmSync(dataDir, { recursive: true, force: true });
  }

  return {
    app,
    baseUrl,
    port,
    call,
    close,
    clock,
    store,
    catalog,
    metrics,
    dataDir,
    databaseFile,
    token,
    fullToken: (team: "acme" | "globex" = "acme") => token(team, ABILITIES),
    acme: { ...acme, llmBudget, emptyBudget, llm, embed, open, warehouse },
    globex: { ...globex, budget: globexBudget, pool: globexPool, key: globexKey },
  };
}

export type ControlApiHarness = Awaited<ReturnType<typeof startControlApi>>;
