/**
 * Child process of the lock-and-proxy benchmark: serves one contender on a free loopback
 * port and prints `READY <json>` once listening. Each contender runs in its own process so
 * the load generator never shares an event loop with what it measures.
 *
 *   servers.ts noop                         a no-op Hono endpoint (the ceiling)
 *   servers.ts upstream <delayMs>           the origin: a small JSON answer after a delay
 *   servers.ts nodeproxy <upstreamPort>     a bare Node pass-through proxy (the platform's floor)
 *   servers.ts undiciproxy <upstreamPort>   the same with undici as the origin client, as Sluice has
 *   servers.ts sluice <fastPort> <slowPort> <limit>
 *                                           `sluice serve`: Lock API and pool proxy behind the host router
 */
import { mkdtempSync } from "node:fs";
import { Agent, createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { Pool as UndiciPool } from "undici";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import type { PoolInput } from "../../src/catalog/types.js";

export const LOCK_HOST = "lock.bench";
export const POOL_DOMAIN = "pools.bench";

function ready(server: Server, extra: Record<string, unknown> = {}): void {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`READY ${JSON.stringify({ port, ...extra })}\n`);
}

function listenFetch(
  fetch: (request: Request, env?: unknown) => Response | Promise<Response>,
  extra = {},
) {
  const server = serve({ fetch, hostname: "127.0.0.1", port: 0 }, () =>
    ready(server as Server, extra),
  );
}

function noop(): void {
  const app = new Hono();
  app.post("/noop", (c) => c.json({ ok: true }));
  listenFetch(app.fetch);
}

function upstream(delayMs: number): void {
  const body = JSON.stringify({ ok: true, model: "bench" });
  const answer = (response: import("node:http").ServerResponse) => {
    response.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    });
    response.end(body);
  };
  const server = createServer((request, response) => {
    request.resume();
    request.once("end", () =>
      delayMs > 0 ? setTimeout(answer, delayMs, response) : answer(response),
    );
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => ready(server));
}

/** The floor of any Node proxy: pass-through with keep-alive, no checks, no limit. */
function nodeProxy(upstreamPort: number): void {
  const agent = new Agent({ keepAlive: true });
  const server = createServer((request, response) => {
    const outgoing = httpRequest(
      {
        host: "127.0.0.1",
        port: upstreamPort,
        method: request.method,
        path: request.url,
        headers: request.headers,
        agent,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    outgoing.once("error", () => response.destroy());
    request.pipe(outgoing);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => ready(server));
}

/** The floor of a Node proxy with undici as its origin client (Sluice's): pass-through, no checks. */
function undiciProxy(upstreamPort: number): void {
  const origin = new UndiciPool(`http://127.0.0.1:${upstreamPort}`);
  const server = createServer((request, response) => {
    const { connection: _hopByHop, ...headers } = request.headers;
    origin.dispatch(
      {
        path: request.url ?? "/",
        method: request.method ?? "GET",
        headers,
        body: request.method === "GET" || request.method === "HEAD" ? null : request,
      },
      {
        onRequestStart() {},
        onResponseStart(controller, statusCode) {
          const raw = controller.rawHeaders as Buffer[];
          const out: string[] = [];
          for (let i = 0; i < raw.length; i += 2) {
            const name = String(raw[i]);
            const lower = name.toLowerCase();
            if (lower === "connection" || lower === "keep-alive") continue;
            out.push(name, String(raw[i + 1]));
          }
          response.writeHead(statusCode, out);
        },
        onResponseData(controller, chunk) {
          if (!response.write(chunk)) {
            controller.pause();
            response.once("drain", () => controller.resume());
          }
        },
        onResponseEnd() {
          response.end();
        },
        onResponseError() {
          response.destroy();
        },
      },
    );
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => ready(server));
}

function pool(subdomain: string, origin: string, maxConcurrent: number): PoolInput {
  return {
    name: subdomain,
    description: null,
    subdomain,
    backend: "http",
    origin,
    maxConcurrent,
    queueSize: 4_096,
    queueTimeoutMs: 30_000,
    rpm: null,
    requestTimeoutMs: 120_000,
    termMs: 30_000,
    renewIntervalMs: 10_000,
    adaptive: false,
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
  };
}

/**
 * Sluice as `sluice serve` runs it: the catalog seeded in a data directory the way the CLI
 * does, then `createSluiceServer` with the default Lock API and proxy apps (metrics
 * recorder, access log, catalog sync and host router included).
 */
async function sluice(fastPort: number, slowPort: number, limit: number): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "sluice-bench-"));
  const pools = [
    pool("proxied", `http://127.0.0.1:${fastPort}`, limit),
    pool("slow", `http://127.0.0.1:${slowPort}`, limit),
    // Wide enough that every fail-fast acquire of the Lock API benchmark succeeds.
    pool("locks", `http://127.0.0.1:${fastPort}`, 4_096),
  ];
  const keys: Record<string, string> = {};
  const data = await openDataDir({ dataDir });
  try {
    const { catalog } = data;
    const { team } = await catalog.createTeamWithOwner({
      teamName: "Bench",
      slug: "bench",
      ownerName: "Bench",
      ownerEmail: "bench@bench.test",
    });
    const credential = catalog.sealCredential("x-api-key", "bench-secret");
    for (const input of pools) {
      const record = await catalog.store.upsertPool(team.id, { ...input, credential });
      const minted = await catalog.mintPoolKey({ teamId: team.id, subdomain: record.subdomain });
      keys[record.subdomain] = minted.plaintext;
    }
  } finally {
    data.close();
  }
  const config = loadServerConfig({
    flags: {
      host: "127.0.0.1",
      port: 0,
      dataDir,
      baseUrl: "http://api.bench",
      lockUrl: `http://${LOCK_HOST}`,
      poolDomain: POOL_DOMAIN,
    },
  });
  const server = await createSluiceServer(config, DEFAULT_SERVER_APPS);
  const { port } = await server.listen();
  process.stdout.write(`READY ${JSON.stringify({ port, keys })}\n`);
}

const [role, first, second, third] = process.argv.slice(2);
if (role === "noop") noop();
else if (role === "nodeproxy") nodeProxy(Number(first));
else if (role === "undiciproxy") undiciProxy(Number(first));
else if (role === "upstream") upstream(Number(first ?? 0));
else if (role === "sluice") await sluice(Number(first), Number(second), Number(third));
else throw new Error(`Unknown role ${role}`);

// BENCH_LOOP_DELAY=1: Sluice reports its event-loop stalls (SQLite commits and checkpoints,
// GC pauses, long batches) when the benchmark stops it.
const loopDelay =
  role === "sluice" && process.env.BENCH_LOOP_DELAY ? monitorEventLoopDelay() : null;
loopDelay?.enable();

// A clean exit on SIGTERM lets `--cpu-prof` write its profile when the benchmark stops us.
process.once("SIGTERM", () => {
  if (loopDelay) {
    const ms = (ns: number) => (ns / 1e6).toFixed(1);
    process.stderr.write(
      `Sluice event-loop delay: p99 ${ms(loopDelay.percentile(99))} ms, p99.9 ${ms(loopDelay.percentile(99.9))} ms, max ${ms(loopDelay.max)} ms\n`,
    );
  }
  process.exit(0);
});
