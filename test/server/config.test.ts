import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { BODY_TIMEOUT_MS } from "../../adapters/hono/lock/request-body.js";
import {
  loadServerConfig,
  SERVER_CONFIG_DEFAULTS,
  withoutCredentials,
} from "../../adapters/server/config.js";
import { describeSlotStore, slotTargetOf } from "../../adapters/server/slot-store.js";
import { InvalidArgumentError } from "../../src/errors.js";

const VALID_KEY = Buffer.alloc(32, 7).toString("base64");

function issuesOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return (error as InvalidArgumentError).issues;
  }
  throw new Error("expected an InvalidArgumentError");
}

describe("loadServerConfig defaults", () => {
  it("gives the documented defaults with nothing set", () => {
    const config = loadServerConfig();
    expect(config).toEqual({
      host: "127.0.0.1",
      port: 8080,
      dataDir: resolve("./.sluice-data"),
      baseUrl: "http://localhost:8080",
      lockUrl: "http://localhost:8080",
      poolDomain: "pools.localhost",
      redisPrefix: "sluice:",
      redisFailurePolicy: "closed",
      redisRestoreGraceMs: 3_000,
      metricsFlushMs: 5_000,
      catalogSyncMs: 1_000,
      shutdownGraceMs: 10_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 10_000,
      corsOrigins: [],
      trustedProxies: [],
      jwksTimeoutMs: 5_000,
      jwksNetwork: "public",
      logFormat: "text",
      logRequests: false,
      clientMetadataNetwork: "public",
    });
    expect(SERVER_CONFIG_DEFAULTS.port).toBe(8080);
  });

  it("derives baseUrl from the port and lockUrl from baseUrl", () => {
    expect(loadServerConfig({ flags: { port: "9000" } }).lockUrl).toBe("http://localhost:9000");
    const config = loadServerConfig({ env: { SLUICE_BASE_URL: "https://sluice.example.com/" } });
    expect(config.baseUrl).toBe("https://sluice.example.com");
    expect(config.lockUrl).toBe("https://sluice.example.com");
  });

  it("is frozen", () => {
    const config = loadServerConfig();
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
  });
});

describe("loadServerConfig precedence", () => {
  it("flags win over env, env wins over defaults", () => {
    const config = loadServerConfig({
      flags: { port: "9100" },
      env: { SLUICE_PORT: "9200", SLUICE_HOST: "0.0.0.0", SLUICE_CATALOG_SYNC_MS: "250" },
    });
    expect(config.port).toBe(9100);
    expect(config.host).toBe("0.0.0.0");
    expect(config.catalogSyncMs).toBe(250);
    expect(config.metricsFlushMs).toBe(5_000);
  });

  it("an empty env var counts as unset", () => {
    expect(loadServerConfig({ env: { SLUICE_PORT: "" } }).port).toBe(8080);
  });

  it("reads every field from its SLUICE_* variable", () => {
    const config = loadServerConfig({
      env: {
        SLUICE_HOST: "::",
        SLUICE_PORT: "0",
        SLUICE_DATA_DIR: "/var/lib/sluice",
        SLUICE_BASE_URL: "http://api.test:1",
        SLUICE_LOCK_URL: "http://lock.test:1",
        SLUICE_POOL_DOMAIN: "Pools.Test",
        SLUICE_REDIS_URL: "redis://127.0.0.1:6379/2",
        SLUICE_REDIS_FAILURE_POLICY: "open",
        SLUICE_REDIS_RESTORE_GRACE_MS: "500",
        SLUICE_METRICS_FLUSH_MS: "1000",
        SLUICE_CATALOG_SYNC_MS: "20",
        SLUICE_SHUTDOWN_GRACE_MS: "0",
        SLUICE_HEADERS_TIMEOUT_MS: "2000",
        SLUICE_KEEP_ALIVE_TIMEOUT_MS: "3000",
        SLUICE_CORS_ORIGINS: "https://app.test, http://localhost:3000",
        SLUICE_TRUSTED_PROXIES: "10.0.0.0/8, ::1",
        SLUICE_JWKS_TIMEOUT_MS: "1500",
        SLUICE_JWKS_NETWORK: "private",
        SLUICE_LOG_FORMAT: "json",
        SLUICE_LOG_REQUESTS: "1",
        SLUICE_METRICS_TOKEN: "scrape-token-0123456789",
        SLUICE_CLIENT_METADATA_NETWORK: "private",
        SLUICE_SECRET_KEY: VALID_KEY,
      },
    });
    expect(config).toEqual({
      host: "::",
      port: 0,
      dataDir: "/var/lib/sluice",
      baseUrl: "http://api.test:1",
      lockUrl: "http://lock.test:1",
      poolDomain: "pools.test",
      redisUrl: "redis://127.0.0.1:6379/2",
      redisPrefix: "sluice:",
      redisFailurePolicy: "open",
      redisRestoreGraceMs: 500,
      metricsFlushMs: 1000,
      catalogSyncMs: 20,
      shutdownGraceMs: 0,
      headersTimeoutMs: 2000,
      keepAliveTimeoutMs: 3000,
      corsOrigins: ["https://app.test", "http://localhost:3000"],
      trustedProxies: ["10.0.0.0/8", "::1"],
      jwksTimeoutMs: 1500,
      jwksNetwork: "private",
      logFormat: "json",
      logRequests: true,
      metricsToken: "scrape-token-0123456789",
      clientMetadataNetwork: "private",
      secretKey: VALID_KEY,
    });
  });

  it("accepts numbers from code as well as text from flags", () => {
    expect(loadServerConfig({ flags: { port: 0, shutdownGraceMs: 5 } })).toMatchObject({
      port: 0,
      shutdownGraceMs: 5,
    });
  });
});

describe("loadServerConfig errors", () => {
  it("names the field, the value and where it came from", () => {
    expect(issuesOf(() => loadServerConfig({ flags: { port: "80a" } }))).toEqual([
      'port: must be a whole number from 0 to 65535 (got "80a", from --port)',
    ]);
    expect(issuesOf(() => loadServerConfig({ env: { SLUICE_PORT: "70000" } }))).toEqual([
      'port: must be a whole number from 0 to 65535 (got "70000", from SLUICE_PORT)',
    ]);
  });

  it("reports every bad field at once", () => {
    const issues = issuesOf(() =>
      loadServerConfig({
        env: {
          SLUICE_BASE_URL: "ftp://files.test",
          SLUICE_REDIS_FAILURE_POLICY: "maybe",
          SLUICE_POOL_DOMAIN: "not a domain",
          SLUICE_REDIS_URL: "localhost:6379",
          SLUICE_CATALOG_SYNC_MS: "1.5",
        },
      }),
    );
    expect(issues.map((issue) => issue.split(":")[0])).toEqual([
      "baseUrl",
      "poolDomain",
      "redisUrl",
      "redisFailurePolicy",
      "catalogSyncMs",
    ]);
  });

  it("refuses a malformed secret key without echoing it", () => {
    const issues = issuesOf(() =>
      loadServerConfig({ env: { SLUICE_SECRET_KEY: "hunter2-not-base64" } }),
    );
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^secretKey: must be 32 random bytes in base64/);
    expect(issues[0]).toContain("from SLUICE_SECRET_KEY");
    expect(issues[0]).not.toContain("hunter2");
  });

  it("never echoes a password inside a URL, and refuses credentials in public URLs", () => {
    const issues = issuesOf(() =>
      loadServerConfig({
        flags: { redisUrl: "http://u:s3cretPW@x", baseUrl: "http://admin:pw123@sluice.test" },
      }),
    );
    expect(issues).toEqual([
      'baseUrl: must not contain a user name or password (got "http://***@sluice.test", from --base-url)',
      'redisUrl: must be a redis:// or rediss:// URL (got "http://***@x", from --redis-url)',
    ]);
    expect(issues.join("\n")).not.toMatch(/s3cretPW|pw123/);
  });

  it("refuses a path in the public URLs: the routes are served at the host's root", () => {
    const issues = issuesOf(() =>
      loadServerConfig({
        flags: { baseUrl: "http://localhost:8080/sluice", lockUrl: "http://lock.test/x?y=1" },
      }),
    );
    expect(issues).toHaveLength(2);
    expect(issues[0]).toMatch(/^baseUrl: must name the host only, without a path/);
    expect(issues[1]).toMatch(/^lockUrl: must name the host only, without a path/);
    expect(loadServerConfig({ flags: { baseUrl: "http://localhost:8080/" } }).baseUrl).toBe(
      "http://localhost:8080",
    );
  });

  it("refuses a Redis URL that cannot be parsed, naming the field", () => {
    for (const redisUrl of ["redis://u:pw@host:99999", "redis://:pw@[bad"]) {
      const issues = issuesOf(() => loadServerConfig({ flags: { redisUrl } }));
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatch(/^redisUrl: must be a valid URL/);
      expect(issues[0]).not.toContain("pw@");
    }
    expect(loadServerConfig({ flags: { redisUrl: "redis://:pw@127.0.0.1:6379/2" } }).redisUrl).toBe(
      "redis://:pw@127.0.0.1:6379/2",
    );
  });

  it("refuses a Redis password with a bare %, naming the field and not the password", () => {
    const issues = issuesOf(() =>
      loadServerConfig({ flags: { redisUrl: "redis://user:TOP%SECRET@127.0.0.1:6379" } }),
    );
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(
      /^redisUrl: has a user or password that is not valid percent-encoding/,
    );
    expect(issues[0]).toContain("from --redis-url");
    expect(issues[0]).not.toContain("SECRET");
  });

  it("masks a whole password that holds an '@' itself", () => {
    expect(withoutCredentials("redis://:p@ss@10.0.0.5:6379/0")).toBe("redis://***@10.0.0.5:6379/0");
    // Redis clients take a password from the query too: the query is hidden whole.
    expect(withoutCredentials("redis://10.0.0.5:6379/0?name=a@b")).toBe(
      "redis://10.0.0.5:6379/0?***",
    );
    expect(withoutCredentials("redis://10.0.0.5:6379/?password=hunter2#x")).toBe(
      "redis://10.0.0.5:6379/?***#x",
    );
    expect(
      describeSlotStore({
        redisUrl: "redis://h:1/?password=hunter2",
        redisFailurePolicy: "closed",
      }),
    ).toBe("Redis slot store at redis://h:1/?*** (fail closed)");
    expect(
      describeSlotStore({ redisUrl: "redis://u:p@ss@h:1", redisFailurePolicy: "closed" }),
    ).toBe("Redis slot store at redis://***@h:1 (fail closed)");
  });

  it("refuses intervals too small to be sane", () => {
    expect(issuesOf(() => loadServerConfig({ flags: { metricsFlushMs: "0" } }))[0]).toMatch(
      /^metricsFlushMs:/,
    );
  });
});

describe("HTTP hardening settings (issue 23)", () => {
  it("the header and keep-alive timeouts default to the 10 s Lock API body timeout", () => {
    const config = loadServerConfig();
    expect(config.headersTimeoutMs).toBe(BODY_TIMEOUT_MS);
    expect(config.keepAliveTimeoutMs).toBe(BODY_TIMEOUT_MS);
    expect(
      issuesOf(() =>
        loadServerConfig({ flags: { headersTimeoutMs: "50", keepAliveTimeoutMs: "x" } }),
      ),
    ).toEqual([
      expect.stringMatching(
        /^headersTimeoutMs: must be a whole number from 100 .*from --headers-timeout-ms/,
      ),
      expect.stringMatching(
        /^keepAliveTimeoutMs: must be a whole number .*from --keep-alive-timeout-ms/,
      ),
    ]);
  });

  it("trusted proxies are CIDRs or addresses, and anything else is refused by name", () => {
    expect(
      loadServerConfig({ flags: { trustedProxies: "10.0.0.0/8,2001:db8::/32" } }).trustedProxies,
    ).toEqual(["10.0.0.0/8", "2001:db8::/32"]);
    expect(() =>
      loadServerConfig({ flags: { trustedProxies: "10.0.0.0/8,proxy.internal" } }),
    ).toThrow(/trustedProxies.*"proxy.internal" is not an IP address or CIDR/s);
  });

  it("CORS origins are normalised as browsers send them, and anything else is refused by name", () => {
    expect(
      loadServerConfig({ flags: { corsOrigins: "HTTPS://App.Test:443/, http://127.0.0.1:3000,*" } })
        .corsOrigins,
    ).toEqual(["https://app.test", "http://127.0.0.1:3000", "*"]);
    for (const bad of [
      "app.test",
      "https://app.test/path",
      "ftp://app.test",
      "https://u:p@app.test",
    ]) {
      const issues = issuesOf(() =>
        loadServerConfig({ flags: { corsOrigins: `https://ok.test,${bad}` } }),
      );
      expect(issues, bad).toEqual([
        expect.stringContaining(`${JSON.stringify(withoutCredentials(bad))} is none`),
      ]);
    }
  });
});

describe("--redis-cluster-nodes", () => {
  it("reads the nodes from the flag or SLUICE_REDIS_CLUSTER_NODES, comma-separated", () => {
    const fromEnv = loadServerConfig({
      env: { SLUICE_REDIS_CLUSTER_NODES: " 10.0.0.1:7000, redis-b.internal:7001,[::1]:7002" },
    });
    expect(fromEnv.redisClusterNodes).toEqual([
      "10.0.0.1:7000",
      "redis-b.internal:7001",
      "[::1]:7002",
    ]);
    expect(fromEnv.redisUrl).toBeUndefined();
    expect(describeSlotStore(fromEnv)).toBe(
      "Redis slot store at Redis Cluster 10.0.0.1:7000,redis-b.internal:7001,[::1]:7002 (fail closed)",
    );
  });

  it("refuses what is not host:port, naming the node and the flag", () => {
    for (const bad of ["10.0.0.1", "10.0.0.1:0", "a:70000", "redis://a:7000", ","]) {
      const issues = issuesOf(() => loadServerConfig({ flags: { redisClusterNodes: bad } }));
      expect(issues, bad).toEqual([
        expect.stringMatching(/^redisClusterNodes: must .*from --redis-cluster-nodes/),
      ]);
    }
    expect(issuesOf(() => loadServerConfig({ flags: { redisClusterNodes: "a:7000,b" } }))).toEqual([
      expect.stringContaining('"b" is none'),
    ]);
  });

  it("refuses a Redis URL and cluster nodes together", () => {
    const issues = issuesOf(() =>
      loadServerConfig({
        flags: { redisUrl: "redis://127.0.0.1:6379", redisClusterNodes: "127.0.0.1:7000" },
      }),
    );
    expect(issues).toEqual([expect.stringMatching(/^redisClusterNodes: give either --redis-url/)]);
  });

  it("servers naming one cluster's nodes in any order share the serving lock's target", () => {
    const target = (nodes: string) =>
      slotTargetOf(loadServerConfig({ flags: { redisClusterNodes: nodes } }));
    expect(target("B:7001,a:7000")).toBe("redis+cluster://a:7000,b:7001 prefix sluice:");
    expect(target("a:7000,b:7001")).toBe(target("B:7001,a:7000"));
    expect(slotTargetOf(loadServerConfig())).toBeNull();
  });
});
