import { describe, expect, it } from "vitest";
import { loadServerConfig } from "../../adapters/server/config.js";
import { describeSlotStore, slotTargetOf } from "../../adapters/server/slot-store.js";
import { InvalidArgumentError } from "../../src/errors.js";

function issuesOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return (error as InvalidArgumentError).issues;
  }
  throw new Error("expected an InvalidArgumentError");
}

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
