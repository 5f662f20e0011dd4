import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as oauth from "oauth4webapi";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { ABILITIES } from "../../src/catalog/types.js";
import { tempDir } from "../cli/cli-process.js";
import { discover, INSECURE, signInClient } from "../mcp/harness.js";
import { poolInput } from "../server/fixtures.js";
import { portOutsideEphemeralRange } from "../support/free-port.js";
import { requirePostgres } from "../support/postgres.js";
import { createReadRoleDatabase, type ReadRoleDatabase } from "../support/read-role.js";

/** What one raw request got back; `status` 0 means the connection failed or hung. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, or undefined. */
  json: unknown;
  /** Set when the socket failed (reset, timeout) instead of answering. */
  failure?: string;
}

/** One raw HTTP request as the fuzzer builds it: any method, path bytes and headers. */
export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

/** How long an answer may take before it counts as a hang. */
export const HANG_MS = 5_000;

/**
 * Sends a request over a real socket with node:http, which (unlike fetch) sends odd methods
 * and unnormalized paths as given, so the server sees what a hostile client sends.
 */
export function rawRequest(port: number, request: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method: request.method,
        path: request.path,
        headers: request.headers,
        timeout: HANG_MS,
        agent: false,
        insecureHTTPParser: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on("error", (error) =>
          resolve({ status: 0, headers: {}, text: "", json: undefined, failure: String(error) }),
        );
      },
    );
    req.on("timeout", () => {
      req.destroy(new Error(`no answer within ${HANG_MS} ms`));
    });
    req.on("error", (error) =>
      resolve({ status: 0, headers: {}, text: "", json: undefined, failure: String(error) }),
    );
    // A body always goes with its length: node sends a GET's body unframed otherwise.
    if (request.body !== undefined) {
      req.setHeader("content-length", Buffer.byteLength(request.body));
      req.write(request.body);
    }
    req.end();
  });
}

/** A running `sluice serve` (default apps) with a team, a Control API token, a pool key and a dashboard session. */
export interface FuzzServer {
  server: SluiceServer;
  port: number;
  baseUrl: string;
  /** A Control API token with every ability. */
  apiToken: string;
  /** A key of pool `chat` (and `sql`, postgres). */
  poolKey: string;
  /** Cookie header of Ada's dashboard session (owner of Acme). */
  cookie: string;
  /** Budget id of "LLM". */
  budgetId: number;
  /** An MCP access token for Ada, or undefined when `withMcp` was not asked. */
  mcpToken?: string;
  /** Whether postgres pool `warehouse` exists (`withPostgres` asked and PostgreSQL is up). */
  hasPostgres: boolean;
  /** A key of pool `warehouse`, when it exists. */
  warehouseKey?: string;
  /** The server's log lines so far (start-up, and an error line for every 5xx or fault). */
  logs: string[];
  close(): Promise<void>;
}

/** An origin that answers every request 200 `ok`, so the proxy's own answers are what is tested. */
async function startEchoOrigin(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => response.end("ok"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/**
 * `sluice serve` as composed by default, on a real socket, over a seeded data directory: team
 * Acme (owner Ada), budget LLM with pool `chat` (origin: an echo server), pool `open` (no
 * key), and with `withPostgres` postgres pool `warehouse` over a read role.
 */
export async function startFuzzServer(
  options: { withMcp?: boolean; withPostgres?: boolean } = {},
): Promise<FuzzServer> {
  const { dir, cleanup } = tempDir("sluice-fuzz-");
  const origin = await startEchoOrigin();
  const postgres: ReadRoleDatabase | null =
    options.withPostgres && (await requirePostgres("fuzz: postgres pool"))
      ? await createReadRoleDatabase("fuzz")
      : null;
  const data = await openDataDir({ dataDir: dir });
  let seeded: {
    teamId: number;
    ownerId: number;
    apiToken: string;
    poolKey: string;
    budgetId: number;
    warehouseKey?: string;
  };
  try {
    const catalog = data.catalog;
    const acme = await catalog.createTeamWithOwner({
      teamName: "Acme",
      slug: "acme",
      ownerName: "Ada",
      ownerEmail: "ada@acme.test",
    });
    const budget = await catalog.store.upsertBudget(acme.team.id, {
      name: "LLM",
      originMaxConcurrent: 20,
    });
    await catalog.store.upsertPool(
      acme.team.id,
      poolInput("chat", {
        name: "Chat",
        maxConcurrent: 2,
        budgetId: budget.id,
        origin: origin.url,
      }),
    );
    await catalog.store.upsertPool(
      acme.team.id,
      poolInput("open", { requireKey: false, origin: origin.url }),
    );
    if (postgres) {
      await catalog.store.upsertPool(
        acme.team.id,
        poolInput("warehouse", {
          backend: "postgres",
          database: catalog.sealDatabase(postgres.readUrl, {
            maxRows: 1000,
            maxResultBytes: 1_000_000,
            statementTimeoutMs: 2_000,
          }),
        }),
      );
    }
    const apiToken = await catalog.createApiToken({
      teamId: acme.team.id,
      actorUserId: acme.owner.id,
      name: "fuzz",
      abilities: ABILITIES,
      lifetime: "1y",
    });
    const key = await catalog.mintPoolKey({
      teamId: acme.team.id,
      subdomain: "chat",
      label: "fuzz",
    });
    seeded = {
      teamId: acme.team.id,
      ownerId: acme.owner.id,
      apiToken: apiToken.plaintext,
      poolKey: key.plaintext,
      budgetId: budget.id,
    };
    if (postgres) {
      seeded.warehouseKey = (
        await catalog.mintPoolKey({ teamId: acme.team.id, subdomain: "warehouse", label: "fuzz" })
      ).plaintext;
    }
  } finally {
    data.close();
  }
  const port = await portOutsideEphemeralRange();
  const baseUrl = `http://127.0.0.1:${port}`;
  const logs: string[] = [];
  const server = await createSluiceServer(
    loadServerConfig({
      flags: { port: String(port), host: "127.0.0.1", dataDir: dir, baseUrl },
    }),
    { ...DEFAULT_SERVER_APPS, log: (line) => logs.push(line) },
  );
  await server.listen();
  const { token } = await server.auth.createSignInLink(seeded.teamId, seeded.ownerId);
  const signIn = await fetch(`${baseUrl}/sign-in/link`, {
    method: "POST",
    headers: { origin: baseUrl, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token }),
    redirect: "manual",
  });
  const cookie = signIn.headers.get("set-cookie")?.split(";")[0];
  if (signIn.status !== 303 || !cookie) throw new Error(`sign-in failed: ${signIn.status}`);
  let mcpToken: string | undefined;
  if (options.withMcp) {
    const { as } = await discover(`${baseUrl}/mcp`);
    const redirectUri = "http://127.0.0.1:9/callback";
    const client = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { redirect_uris: [redirectUri], client_name: "Fuzz" },
        INSECURE,
      ),
    );
    const { tokens } = await signInClient({ as, client, redirectUri, cookie });
    mcpToken = tokens.access_token;
  }
  return {
    server,
    port,
    baseUrl,
    apiToken: seeded.apiToken,
    poolKey: seeded.poolKey,
    cookie,
    budgetId: seeded.budgetId,
    mcpToken,
    hasPostgres: postgres !== null,
    logs,
    warehouseKey: seeded.warehouseKey,
    async close() {
      await server.close();
      await new Promise((resolve) => origin.server.close(resolve));
      await postgres?.drop();
      cleanup();
    },
  };
}
