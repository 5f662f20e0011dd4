import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { createSluiceServer, type SluiceServer } from "../../adapters/server/create-server.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { DEFAULT_SERVER_APPS } from "../../adapters/server/default-apps.js";
import { signLockRequest } from "../../src/policies/request-signing.js";
import { jwtTokensPool, poolInput } from "../catalog/fixtures.js";
import {
  deleteKeys,
  keysUnder,
  REDIS_URL,
  requireRedis,
  uniquePrefix,
} from "../redis/redis-harness.js";
import { parsePrometheusText, sampleValue } from "../support/prometheus-text.js";
import { httpRequest } from "./http-client.js";

const METRICS_TOKEN = "metrics-token-0123456789";
const redis = await requireRedis("caller policies through sluice serve");

/**
 * `sluice serve` with caller policies: trusted proxies from the server settings, refusals in
 * `/metrics` under the policy, signed requests' nonces in Redis when slots are there, and
 * the JWKS timeout from the server settings.
 */
describe.runIf(redis)("caller policies in a running server", () => {
  const prefix = uniquePrefix("policies-serve");
  let dir: string;
  let server: SluiceServer;
  let port: number;
  let key: string;
  let signer: { id: number; plaintext: string; secret: string };
  let silentKeyServer: Server;
  const logLines: string[] = [];

  const lock = (pool: string, headers: Record<string, string>) =>
    httpRequest({
      port,
      path: `/pools/${pool}/lock/acquire`,
      host: `localhost:${port}`,
      method: "POST",
      headers,
    });

  beforeAll(async () => {
    // A JWKS URL that accepts connections and never answers.
    silentKeyServer = createServer(() => {});
    await new Promise<void>((resolve) => silentKeyServer.listen(0, "127.0.0.1", resolve));
    const jwksPort = (silentKeyServer.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), "sluice-policies-"));
    const data = await openDataDir({ dataDir: dir });
    try {
      const { team } = await data.catalog.createTeamWithOwner({
        teamName: "Acme",
        slug: "acme",
        ownerName: "Ada",
        ownerEmail: "ada@acme.test",
      });
      await data.catalog.store.upsertPool(
        team.id,
        poolInput({ subdomain: "walled", callerPolicies: { ipAllowlist: ["203.0.113.0/24"] } }),
      );
      await data.catalog.store.upsertPool(
        team.id,
        poolInput({ subdomain: "signed", callerPolicies: { hmac: { skewSeconds: 300 } } }),
      );
      await data.catalog.store.upsertPool(
        team.id,
        jwtTokensPool(`http://127.0.0.1:${jwksPort}/jwks`),
      );
      key = (await data.catalog.mintPoolKey({ teamId: team.id, subdomain: "walled" })).plaintext;
      const minted = await data.catalog.mintPoolKey({ teamId: team.id, subdomain: "signed" });
      signer = {
        id: minted.key.id,
        plaintext: minted.plaintext,
        secret: minted.requestSecret as string,
      };
    } finally {
      await data.close();
    }
    server = await createSluiceServer(
      loadServerConfig({
        flags: {
          port: "0",
          dataDir: dir,
          metricsToken: METRICS_TOKEN,
          trustedProxies: "127.0.0.1/32, ::1",
          redisUrl: REDIS_URL,
          redisPrefix: prefix,
          jwksTimeoutMs: "300",
          // The key server below listens on 127.0.0.1.
          jwksNetwork: "private",
        },
      }),
      { ...DEFAULT_SERVER_APPS, log: (line) => logLines.push(line) },
    );
    ({ port } = await server.listen());
  });
  afterAll(async () => {
    await server?.close();
    silentKeyServer.closeAllConnections();
    await new Promise<void>((resolve) => silentKeyServer.close(() => resolve()));
    await deleteKeys(prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  it("reads the caller's address through the configured trusted proxies", async () => {
    expect(
      (await lock("walled", { "x-svc-key": key, "x-forwarded-for": "203.0.113.9" })).status,
    ).toBe(200);
    const refused = await lock("walled", { "x-svc-key": key, "x-forwarded-for": "198.51.100.1" });
    expect(refused.status).toBe(403);
    expect(refused.json()).toMatchObject({ error: "unauthorized" });
  });

  it("remembers nonces in Redis, and catches a replay", async () => {
    const headers = {
      "x-svc-key": signer.plaintext,
      ...signLockRequest({
        secret: signer.secret,
        keyId: signer.id,
        method: "POST",
        url: "/pools/signed/lock/acquire",
      }),
    };
    expect((await lock("signed", headers)).status).toBe(200);
    expect((await lock("signed", headers)).status).toBe(401);
    expect((await keysUnder(prefix)).some((name) => name.startsWith(`${prefix}nonce:`))).toBe(true);
  });

  it("counts policy refusals under the policy in /metrics, not as a bare 401/403", async () => {
    const answer = await httpRequest({
      port,
      path: "/metrics",
      host: `localhost:${port}`,
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const samples = parsePrometheusText(answer.body);
    const refusals = (pool: string, reason: string) =>
      sampleValue(samples, "sluice_pool_refusals_total", { pool, reason });
    expect(refusals("walled", "ip_allowlist")).toBe(1);
    expect(refusals("signed", "hmac")).toBe(1);
    expect(refusals("walled", "forbidden")).toBeUndefined();
    expect(refusals("signed", "unauthorized")).toBeUndefined();
    expect(
      sampleValue(samples, "sluice_pool_requests_total", { pool: "walled", outcome: "refused" }),
    ).toBe(1);
  });

  it("refuses a token after --jwks-timeout-ms when the JWKS URL does not answer, then at once for a while, and logs it once", async () => {
    // Any JWT-shaped token: the key set is fetched before its signature can be checked.
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const token = `${part({ alg: "RS256", kid: "k1" })}.${part({ sub: "a" })}.c2ln`;
    const refusal = async () => {
      const started = performance.now();
      const refused = await lock("tokens", { authorization: `Bearer ${token}` });
      expect(refused.status).toBe(401);
      expect(refused.json()).toMatchObject({
        error: "unauthorized",
        message: "The token in authorization was refused: the key set could not be fetched.",
      });
      return performance.now() - started;
    };
    const first = await refusal();
    expect(first).toBeGreaterThanOrEqual(280);
    expect(first).toBeLessThan(3_000);
    // The retry interval after a failure: refused at once, without waiting out the timeout again.
    expect(await refusal()).toBeLessThan(280);
    const outage = logLines.filter((line) => line.includes("could not be fetched: timed out"));
    expect(outage).toHaveLength(1);
    expect(outage[0]).not.toContain(token);
  });
});
