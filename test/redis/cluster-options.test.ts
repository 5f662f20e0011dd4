import { describe, expect, it } from "vitest";
import { parseClusterUrl } from "../../adapters/redis/cluster.js";
import { createRedisSlotStore } from "../../adapters/redis/index.js";
import { InvalidArgumentError } from "../../src/errors.js";

describe("naming a Redis Cluster", () => {
  it("reads the nodes and the credentials of a redis+cluster:// URL", () => {
    expect(parseClusterUrl("redis+cluster://10.0.0.1:7000,redis-b:7001/")).toEqual({
      nodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "redis-b", port: 7001 },
      ],
    });
    expect(parseClusterUrl("redis+cluster://app:p%40ss@[::1]:7000,h:7001")).toEqual({
      nodes: [
        { host: "::1", port: 7000 },
        { host: "h", port: 7001 },
      ],
      username: "app",
      password: "p@ss",
    });
  });

  it("refuses a node that is not host:port, naming it", () => {
    expect(() => parseClusterUrl("redis+cluster://a:7000,b")).toThrow(
      new InvalidArgumentError('Redis Cluster node "b" is not host:port (a port from 1 to 65535).'),
    );
    expect(() => parseClusterUrl("redis+cluster://a:70000")).toThrow(InvalidArgumentError);
  });

  it("the store takes one place to connect to, and only well-formed nodes", () => {
    expect(() =>
      createRedisSlotStore({ cluster: { nodes: ["a:7000"] }, url: "redis://127.0.0.1" }),
    ).toThrow(/either cluster, url or redis/);
    expect(() => createRedisSlotStore({ cluster: { nodes: [] } })).toThrow(
      /cluster.nodes: Name at least one node/,
    );
    expect(() => createRedisSlotStore({ cluster: { nodes: ["a"] } })).toThrow(InvalidArgumentError);
  });

  it("refuses a URL of another scheme by name, before connecting (it failed later as 'no connection')", async () => {
    const refused = () => createRedisSlotStore({ url: "http://127.0.0.1:6379" });
    expect(refused).toThrow(InvalidArgumentError);
    expect(refused).toThrow(/url: Must be a redis:\/\/, rediss:\/\/ or redis\+cluster:\/\/ URL/);
    for (const url of [
      "redis://127.0.0.1:1",
      "REDISS://127.0.0.1:1",
      "redis+cluster://127.0.0.1:1",
      "127.0.0.1:1",
    ]) {
      const store = createRedisSlotStore({ url, failurePolicy: "open" });
      expect(store.kind).toBe("redis");
      await store.close();
    }
  });
});
