import { describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { withOpsRoutes } from "../../adapters/server/ops-routes.js";
import { createPrometheusMetrics } from "../../adapters/server/prometheus-metrics.js";
import { checkReadiness, PARTIAL_REDIS } from "../../adapters/server/readiness.js";
import { createServerLog, formatLogLine, scrubSecrets } from "../../adapters/server/server-log.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { createGovernor } from "../../src/index.js";
import { MemorySlotStore } from "../../src/store/memory-store.js";

describe("the operations settings", () => {
  it("reads --log-requests as a switch and refuses what is not on or off", () => {
    expect(loadServerConfig({ flags: { logRequests: true } }).logRequests).toBe(true);
    expect(loadServerConfig({ env: { SLUICE_LOG_REQUESTS: "off" } }).logRequests).toBe(false);
    expect(() => loadServerConfig({ env: { SLUICE_LOG_REQUESTS: "maybe" } })).toThrow(
      'logRequests: must be "true" or "false" (got "maybe", from SLUICE_LOG_REQUESTS)',
    );
  });

  it("accepts text or json as the log format only", () => {
    expect(loadServerConfig({ flags: { logFormat: "json" } }).logFormat).toBe("json");
    expect(() => loadServerConfig({ flags: { logFormat: "yaml" } })).toThrow(
      'logFormat: must be "text" or "json" (got "yaml", from --log-format)',
    );
  });

  it("refuses a short metrics token without showing it", () => {
    let thrown: unknown;
    try {
      loadServerConfig({ env: { SLUICE_METRICS_TOKEN: "short-secret" } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidArgumentError);
    expect((thrown as Error).message).toBe(
      "Invalid configuration:\n  metricsToken: must be 16 to 512 printable characters without spaces (from SLUICE_METRICS_TOKEN)",
    );
  });
});

describe("log lines", () => {
  it("writes a revealed line (a one-time sign-in link) as it is, and scrubs the same text as info", () => {
    for (const format of ["text", "json"] as const) {
      const lines: string[] = [];
      const log = createServerLog(
        format,
        (line) => lines.push(line),
        undefined,
        () => 0,
      );
      const link = "http://localhost:8080/sign-in/link?token=slc_sil_abc123";
      log.reveal(`  ${link}`);
      log.info(`  ${link}`);
      expect(lines[0]).toContain(link);
      expect(lines[1]).not.toContain("abc123");
    }
  });

  it("quote text values that could forge a line or a field", () => {
    expect(
      formatLogLine(
        "text",
        "error",
        "Request failed",
        { pool: "chat", path: "/a b\nstatus=200", status: 502 },
        0,
      ),
    ).toBe('Request failed pool=chat path="/a b\\nstatus=200" status=502');
    expect(JSON.parse(formatLogLine("json", "info", "Started", { port: 8080 }, 0))).toEqual({
      time: "1970-01-01T00:00:00.000Z",
      level: "info",
      msg: "Started",
      port: 8080,
    });
  });

  it("hide secrets inside a cause", () => {
    expect(
      scrubSecrets(
        "fetch http://user:pw@10.0.0.5/x?key=abc failed with Bearer sk-upstream and slc_key_AbC-12",
      ),
    ).toBe("fetch http://***@10.0.0.5/x?*** failed with Bearer *** and slc_***");
  });
});

describe("readiness with a Redis Cluster partly down", () => {
  const parts = (health: { state: string; partial?: boolean }) => ({
    catalog: { changeMarker: async () => 1 },
    slotStore: Object.assign(new MemorySlotStore(), {
      health: () => ({ since: 0, reason: "Redis Cluster master 127.0.0.1:7001: down", ...health }),
    }),
    sync: { lastFailure: () => null },
    stopping: () => false,
  });

  it("stays ready (200, with a remark) while some masters are down, and is not ready when the store is", async () => {
    const governor = createGovernor();
    const metrics = createPrometheusMetrics(() => governor);
    const opsFor = (health: { state: string; partial?: boolean }) =>
      withOpsRoutes({
        controlApp: { fetch: () => new Response(null, { status: 404 }) },
        metrics,
        readiness: () => checkReadiness(parts(health)),
      });
    const partly = await opsFor({ state: "unavailable", partial: true }).fetch(
      new Request("http://localhost/readyz"),
      undefined,
    );
    expect(partly.status).toBe(200);
    expect(await partly.json()).toMatchObject({
      status: "ready",
      checks: { redis: PARTIAL_REDIS },
    });
    const wholly = await opsFor({ state: "unavailable" }).fetch(
      new Request("http://localhost/readyz"),
      undefined,
    );
    expect(wholly.status).toBe(503);
    expect(await wholly.json()).toMatchObject({ failing: ["redis"] });
  });
});
