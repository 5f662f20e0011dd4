import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from "ioredis";
import { InvalidArgumentError } from "../../src/errors.js";
import { optionalPackage } from "../packages/optional-package.js";
import { keySlot } from "./key-slot.js";

/** A single Redis or a Redis Cluster: the store speaks to either the same way. */
export type RedisClient = Redis | Cluster;

/** Where a Redis Cluster is: some of its nodes (the client learns the others from them). */
export interface RedisClusterTarget {
  /** `host:port` strings or `{ host, port }`; one reachable node is enough to start. */
  nodes: readonly (string | { host: string; port: number })[];
}

const CLUSTER_URL = /^redis\+cluster:\/\//;

/**
 * True for the URL form of a cluster, `redis+cluster://[user:password@]host:port,host:port`.
 *
 * @example
 * ```ts
 * isClusterUrl("redis+cluster://10.0.0.1:7000,10.0.0.2:7000"); // true
 * ```
 */
export function isClusterUrl(url: string): boolean {
  return CLUSTER_URL.test(url);
}

/**
 * Reads a `redis+cluster://` URL: its nodes, and the user and password every node is given.
 *
 * @example
 * ```ts
 * parseClusterUrl("redis+cluster://:pw@a:7000,b:7000");
 * // { nodes: [{ host: "a", port: 7000 }, { host: "b", port: 7000 }], password: "pw" }
 * ```
 */
export function parseClusterUrl(url: string): {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
} {
  const rest = url.replace(CLUSTER_URL, "").replace(/\/$/, "");
  const at = rest.lastIndexOf("@");
  const userinfo = at === -1 ? "" : rest.slice(0, at);
  const credentials: { username?: string; password?: string } = {};
  if (userinfo !== "") {
    const colon = userinfo.indexOf(":");
    const username = decodeURIComponent(colon === -1 ? userinfo : userinfo.slice(0, colon));
    if (username !== "") credentials.username = username;
    if (colon !== -1) credentials.password = decodeURIComponent(userinfo.slice(colon + 1));
  }
  return { nodes: parseClusterNodes(rest.slice(at + 1).split(",")), ...credentials };
}

const NODE = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):(\d{1,5})$/;

/**
 * True for a node address `host:port` (an IPv6 host in brackets, a port from 1 to 65535).
 *
 * @example
 * ```ts
 * isClusterNode("[::1]:7000"); // true
 * isClusterNode("10.0.0.1"); // false
 * ```
 */
export function isClusterNode(text: string): boolean {
  const port = Number(NODE.exec(text)?.[2]);
  return port >= 1 && port <= 65_535;
}

/**
 * Reads `host:port` node addresses (an IPv6 host in brackets, `[::1]:7000`); throws
 * `InvalidArgumentError` naming the first that is not one.
 *
 * @example
 * ```ts
 * parseClusterNodes(["127.0.0.1:7000", { host: "10.0.0.2", port: 7000 }]);
 * ```
 */
export function parseClusterNodes(
  nodes: RedisClusterTarget["nodes"],
): { host: string; port: number }[] {
  if (nodes.length === 0)
    throw new InvalidArgumentError("A Redis Cluster needs at least one node.");
  return nodes.map((node) => {
    if (typeof node !== "string") return { host: node.host, port: node.port };
    const text = node.trim();
    if (!isClusterNode(text)) {
      throw new InvalidArgumentError(
        `Redis Cluster node ${JSON.stringify(node)} is not host:port (a port from 1 to 65535).`,
      );
    }
    const [, host, port] = NODE.exec(text)!;
    return { host: host!.replace(/^\[|\]$/g, ""), port: Number(port) };
  });
}

/**
 * Cluster options for the store's connections. Each node connection is bounded like a single
 * Redis (`nodeOptions`). ioredis follows `MOVED` and `ASK` (the script was not run, so sending
 * it on is safe), retries `CLUSTERDOWN` and `TRYAGAIN` while a failover completes, and
 * refreshes the slot map. One retry is turned off: a command in flight on a node whose
 * connection closed is **not** sent again (`retryDelayOnFailover: 0`), as it may have run
 * there (an acquire sent twice could grant twice); it fails, and the store's recovery puts
 * back what the shard lost. `sharded`: the subscriber, with one `SSUBSCRIBE` connection per
 * master, re-subscribed by ioredis when the slots move.
 *
 * @example
 * ```ts
 * new Cluster(nodes, clusterOptions(boundedOptions(1000), false));
 * ```
 */
export function clusterOptions(nodeOptions: RedisOptions, sharded: boolean): ClusterOptions {
  const { retryStrategy: _perNode, ...redisOptions } = nodeOptions;
  return {
    redisOptions,
    shardedSubscribers: sharded,
    enableOfflineQueue: true,
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: Math.max(nodeOptions.commandTimeout ?? 1_000, 1_000),
    clusterRetryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
  };
}

/**
 * Opens a cluster client (ioredis `Cluster`, loaded on first use like the single client).
 *
 * @example
 * ```ts
 * const cluster = openCluster({ nodes: ["127.0.0.1:7000"] }, boundedOptions(1000), false);
 * ```
 */
export function openCluster(
  target: RedisClusterTarget | string,
  nodeOptions: RedisOptions,
  sharded: boolean,
): Cluster {
  const parsed =
    typeof target === "string"
      ? parseClusterUrl(target)
      : { nodes: parseClusterNodes(target.nodes) };
  const { nodes, ...credentials } = parsed;
  const ClusterClass = optionalPackage<typeof import("ioredis")>(
    "ioredis",
    "The Redis slot store",
  ).Cluster;
  return new ClusterClass(
    nodes as ClusterNode[],
    clusterOptions({ ...nodeOptions, ...credentials }, sharded),
  );
}

/**
 * The servers that hold keys: every master of a cluster, or the single Redis. What must reach
 * all of them (loading scripts, scanning keys, reading `INFO`) runs once on each.
 *
 * @example
 * ```ts
 * for (const node of masters(client)) await node.script("LOAD", text);
 * ```
 */
export function masters(client: RedisClient): Redis[] {
  return client.isCluster ? (client as Cluster).nodes("master") : [client as Redis];
}

/**
 * Resolves once a cluster client knows its slot map (at once for a single Redis, whose
 * commands wait in its offline queue within `commandTimeout`); rejects after `timeoutMs`.
 * A cluster's offline queue has no time bound, so the store waits here instead of sending
 * commands into it.
 *
 * @example
 * ```ts
 * await clusterReady(client, 1000);
 * ```
 */
export function clusterReady(client: RedisClient, timeoutMs: number): Promise<void> {
  if (!client.isCluster || client.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off("ready", onReady);
      reject(new Error(`Redis Cluster not ready within ${timeoutMs} ms (no node answers)`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once("ready", onReady);
  });
}

/**
 * Asks a cluster client for its slot map now rather than at its periodic refresh (every 5 s):
 * a probe of a shard whose master died finds the promoted replica as soon as it is promoted.
 * Resolves either way (a failed refresh leaves the old map; the command after it fails and the
 * probe tries again). A single Redis has no slot map: nothing to do.
 *
 * @example
 * ```ts
 * await refreshSlotMap(client);
 * ```
 */
export function refreshSlotMap(client: RedisClient): Promise<void> {
  if (!client.isCluster) return Promise.resolve();
  return new Promise((resolve) => (client as Cluster).refreshSlotsCache(() => resolve()));
}

/**
 * The node of a cluster that holds the group (`tag`) now, to send it a keyless command
 * (the time); the client itself for a single Redis.
 *
 * @example
 * ```ts
 * const [seconds] = await nodeFor(client, "{p:llm}").time();
 * ```
 */
export function nodeFor(client: RedisClient, tag: string | null): RedisClient {
  if (!client.isCluster || tag === null) return client;
  const cluster = client as Cluster;
  const master = cluster.slots[keySlot(tag)]?.[0];
  const node = cluster.nodes("master").find((candidate: Redis) => {
    return `${candidate.options.host}:${candidate.options.port}` === master;
  });
  return node ?? client;
}
