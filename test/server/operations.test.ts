import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { poolInput } from "../catalog/fixtures.js";
import { TestUpstream } from "../proxy/upstream.js";
import { parsePrometheusText, sampleValue } from "../support/prometheus-text.js";
import { httpRequest } from "./http-client.js";

const METRICS_TOKEN = "metrics-token-0123456789";
const UPSTREAM_SECRET = "upstream-secret-value";

/** A port nothing listens on: the origin of the pool whose origin is down. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * `sluice serve`'s composition on a real socket, with real traffic through the Lock API and
 * the proxy, then read back through `/metrics` (Prometheus text, parsed), the probes and the
 * server's JSON log lines.
 */
describe("the operations surface of a running server", () => {
  let dir: string;
  let upstream: TestUpstream;
  let server: SluiceServer;
  let port: number;
  let key: string;
  let downKey: string;
  const lines: string[] = [];
  const entries = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

  const control = (path: string, headers: Record<string, string> = {}) =>
    httpRequest({ port, path, host: `localhost:${port}`, headers });
  const lock = (
    path: string,
    body?: unknown,
    headers: Record<string, string> = { "x-svc-key": key },
  ) =>
    httpRequest({
      port,
      path,
      host: `localhost:${port}`,
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const proxied = (pool: string, path: string, headers: Record<string, string>) =>
    httpRequest({ port, path, host: `${pool}.pools.localhost:${port}`, headers });
  async function scrape() {
    const answer = await control("/metrics", { authorization: `Bearer ${METRICS_TOKEN}` });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    return { text: answer.body, samples: parsePrometheusText(answer.body) };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-ops-"));
    upstream = await new TestUpstream().start();
    upstream.on("/v1/slow", async (_request, response) => {
      await new Promise((resolve) => setTimeout(resolve, 60));
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
    });
    const data = await openDataDir({ dataDir: dir });
    try {
      const { team } = await data.catalog.createTeamWithOwner({
        teamName: "Acme",
        slug: "acme",
        ownerName: "Ada",
        ownerEmail: "ada@acme.test",
      });
      const credential = data.catalog.sealCredential("x-api-key", UPSTREAM_SECRET);
      await data.catalog.store.upsertPool(
        team.id,
        poolInput({
          subdomain: "chat",
          origin: upstream.url,
          maxConcurrent: 1,
          rpm: 600,
          credential,
        }),
      );
      await data.catalog.store.upsertPool(
        team.id,
        poolInput({ subdomain: "down", origin: `http://127.0.0.1:${await closedPort()}` }),
      );
      key = (await data.catalog.mintPoolKey({ teamId: team.id, subdomain: "chat" })).plaintext;
      downKey = (await data.catalog.mintPoolKey({ teamId: team.id, subdomain: "down" })).plaintext;
    } finally {
      data.close();
    }
    server = await createSluiceServer(
      loadServerConfig({
        flags: {
          port: "0",
          dataDir: dir,
          logFormat: "json",
          logRequests: "true",
          metricsToken: METRICS_TOKEN,
        },
      }),
      { ...DEFAULT_SERVER_APPS, log: (line) => lines.push(line) },
    );
    ({ port } = await server.listen());
  });

  afterAll(async () => {
    await server?.close();
    await upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts real Lock API and proxy traffic into the Prometheus series of each pool", async () => {
    // Lock API: one grant, a fail-fast refusal while it is held, then a release that reports
    // the upstream's 429.
    const granted = await lock("/pools/chat/lock/acquire");
    expect(granted.status).toBe(200);
    const held = await scrape();
    expect(sampleValue(held.samples, "sluice_pool_in_flight", { pool: "chat" })).toBe(1);
    expect((await lock("/pools/chat/lock/acquire")).status).toBe(429);
    const { slotId } = granted.json<{ slotId: string }>();
    const released = await lock(`/pools/chat/lock/${slotId}/release`, {
      status: 429,
      throttled: 1,
    });
    expect(released.json()).toEqual({ released: true });
    // Proxy: a slow answer (a measurable hold), a wrong key, and a pool no one defined.
    expect((await proxied("chat", "/v1/slow", { "x-svc-key": key })).status).toBe(200);
    expect((await proxied("chat", "/v1/slow", { "x-svc-key": `${key}x` })).status).toBe(401);
    await proxied("ghost", "/v1/slow", { "x-svc-key": key });

    const { text, samples } = await scrape();
    const value = (name: string, labels: Record<string, string>) =>
      sampleValue(samples, name, labels);
    expect(value("sluice_pool_requests_total", { pool: "chat", outcome: "admitted" })).toBe(2);
    expect(value("sluice_pool_requests_total", { pool: "chat", outcome: "rejected" })).toBe(1);
    expect(value("sluice_pool_refusals_total", { pool: "chat", reason: "concurrency" })).toBe(1);
    expect(value("sluice_pool_refusals_total", { pool: "chat", reason: "unauthorized" })).toBe(1);
    expect(value("sluice_pool_upstream_throttled_total", { pool: "chat" })).toBe(1);
    expect(value("sluice_pool_in_flight", { pool: "chat" })).toBe(0);
    expect(value("sluice_pool_queue_depth", { pool: "chat" })).toBe(0);
    expect(value("sluice_pool_concurrency_limit", { pool: "chat", kind: "configured" })).toBe(1);
    expect(value("sluice_pool_concurrency_limit", { pool: "chat", kind: "effective" })).toBe(1);
    expect(value("sluice_pool_rpm_limit", { pool: "chat", kind: "configured" })).toBe(600);
    expect(value("sluice_pool_queue_wait_seconds_count", { pool: "chat" })).toBe(2);
    // Two slots released: the lock slot and the proxied request's, held at least 60 ms.
    expect(value("sluice_pool_hold_seconds_count", { pool: "chat" })).toBe(2);
    expect(value("sluice_pool_hold_seconds_sum", { pool: "chat" })).toBeGreaterThanOrEqual(0.06);
    expect(value("sluice_pool_hold_seconds_bucket", { pool: "chat", le: "+Inf" })).toBe(2);
    // The process metrics of prom-client.
    expect(value("process_cpu_user_seconds_total", {})).toBeGreaterThan(0);
    expect(value("nodejs_heap_size_used_bytes", {})).toBeGreaterThan(0);
    // Labels are the subdomains the governor knows: never a key, never a name a caller typed.
    const pools = new Set(samples.flatMap((sample) => sample.labels.pool ?? []));
    expect([...pools].sort()).toEqual(["chat", "down"]);
    expect(text).not.toContain("slc_");
    expect(text).not.toContain(UPSTREAM_SECRET);
  });

  it("asks for the metrics token, and serves /metrics only on the base host", async () => {
    const without = await control("/metrics");
    expect(without.status).toBe(401);
    expect(without.headers["www-authenticate"]).toBe('Bearer realm="metrics"');
    expect((await control("/metrics", { authorization: "Bearer wrong-token-000000" })).status).toBe(
      401,
    );
    expect((await control("/metrics", { authorization: `Bearer ${METRICS_TOKEN}` })).status).toBe(
      200,
    );
    // On a pool host the path is the origin's, like any other.
    const before = upstream.hits;
    const onPool = await proxied("chat", "/metrics", { "x-svc-key": key });
    expect(onPool.status).toBe(200);
    expect(upstream.hits).toBe(before + 1);
    expect(upstream.seen.at(-1)?.url).toBe("/metrics");
  });

  it("answers the liveness and readiness probes", async () => {
    const health = await control("/healthz");
    expect(health.status).toBe(200);
    expect(health.json()).toEqual({ status: "ok" });
    const ready = await control("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.json()).toEqual({
      status: "ready",
      checks: { catalog: "ok", catalogSync: "ok", server: "ok" },
    });
    const posted = await httpRequest({
      port,
      path: "/readyz",
      host: `localhost:${port}`,
      method: "POST",
    });
    expect(posted.status).toBe(405);
    expect(posted.headers.allow).toBe("GET, HEAD");
  });

  it("logs an origin failure with its pool, request id and cause, and no secret", async () => {
    const failed = await proxied("down", "/v1/chat?api_key=query-secret", {
      "x-svc-key": downKey,
      "x-request-id": "req-origin-down-1",
    });
    expect(failed.status).toBe(502);
    const line = entries().find(
      (entry) => entry.requestId === "req-origin-down-1" && entry.level === "error",
    );
    expect(line).toMatchObject({
      msg: "Request failed",
      method: "GET",
      path: "/v1/chat",
      pool: "down",
      status: 502,
      requestId: "req-origin-down-1",
    });
    expect(line?.cause).toMatch(/ECONNREFUSED/);
    const { samples } = await scrape();
    expect(sampleValue(samples, "sluice_pool_hold_seconds_count", { pool: "down" })).toBe(1);
    for (const text of lines) {
      expect(text).not.toContain(downKey);
      expect(text).not.toContain(key);
      expect(text).not.toContain(UPSTREAM_SECRET);
      expect(text).not.toContain("query-secret");
      expect(text).not.toContain(METRICS_TOKEN);
    }
  });

  it("logs an origin's own 5xx, and an origin that breaks off its answer", async () => {
    upstream.on("/v1/overloaded", (_request, response) => {
      response.writeHead(503, { "content-type": "text/plain" });
      response.end("busy");
    });
    upstream.on("/v1/broken", (_request, response) => {
      response.writeHead(200, { "content-type": "text/plain", "content-length": "100" });
      response.write("partial");
      setTimeout(() => response.destroy(), 20);
    });
    const overloaded = await proxied("chat", "/v1/overloaded", {
      "x-svc-key": key,
      "x-request-id": "req-503",
    });
    expect(overloaded.status).toBe(503);
    await expect
      .poll(() =>
        entries().find((entry) => entry.requestId === "req-503" && entry.level === "error"),
      )
      .toMatchObject({
        msg: "Request failed",
        status: 503,
        pool: "chat",
        cause: "the origin answered 503",
      });
    await proxied("chat", "/v1/broken", { "x-svc-key": key, "x-request-id": "req-cut" }).catch(
      () => undefined,
    );
    await expect
      .poll(() =>
        entries().find((entry) => entry.requestId === "req-cut" && entry.level === "error"),
      )
      .toMatchObject({ msg: "Response cut off", status: 200, pool: "chat", path: "/v1/broken" });
  });

  it("writes one JSON access line per request with --log-requests", async () => {
    const answered = await proxied("chat", "/v1/echo?secret=1", {
      "x-svc-key": key,
      "x-request-id": "req-access-1",
    });
    expect(answered.status).toBe(200);
    // The access line is written when the response has ended.
    await expect
      .poll(() => entries().find((entry) => entry.requestId === "req-access-1"))
      .toMatchObject({
        level: "info",
        msg: "Request",
        method: "GET",
        host: `chat.pools.localhost:${port}`,
        path: "/v1/echo",
        status: 200,
        pool: "chat",
      });
    const access = entries().find((entry) => entry.requestId === "req-access-1");
    expect(typeof access?.durationMs).toBe("number");
    expect(Number.isNaN(Date.parse(String(access?.time)))).toBe(false);
    // A request id a client sends that could forge a line is replaced by a fresh one.
    await control("/healthz", { "x-request-id": 'bad id" injected' });
    await expect
      .poll(() => entries().filter((entry) => entry.path === "/healthz").length)
      .toBeGreaterThan(1);
    const ids = entries()
      .filter((entry) => entry.path === "/healthz")
      .map((entry) => String(entry.requestId));
    expect(ids.every((id) => /^[A-Za-z0-9._:-]+$/.test(id))).toBe(true);
    // Start-up lines are JSON too.
    expect(entries().some((entry) => /^Listening on /.test(String(entry.msg)))).toBe(true);
  });

  it("never logs a key or token a caller put in the path, the Host or X-Request-Id", async () => {
    const token = "slc_tok_SecretShapedTokenValue123";
    const before = lines.length;
    await lock(`/pools/${key}/lock/acquire`, {});
    await control(`/api/v1/pools/${token}`, { "x-request-id": token });
    await httpRequest({
      port,
      path: "/v1/echo",
      host: `${key}.pools.localhost:${port}`,
      headers: {},
    });
    await expect.poll(() => lines.length - before).toBeGreaterThanOrEqual(3);
    const written = lines.slice(before).join("\n");
    expect(written).toContain("slc_***");
    expect(written).not.toContain(key);
    expect(written).not.toContain("SecretShapedTokenValue123");
  });

  it("drops a deleted pool's series", async () => {
    const store = server.catalog.store;
    const down = await store.findPoolBySubdomain("down");
    expect(await store.deletePool(down!.teamId, down!.id)).toBe(true);
    await server.syncCatalog();
    const { samples } = await scrape();
    const pools = new Set(samples.flatMap((sample) => sample.labels.pool ?? []));
    expect([...pools]).toEqual(["chat"]);
  });
});
