import * as v from "valibot";
import { isClusterNode } from "../redis/cluster.js";

/**
 * `--redis-cluster-nodes`: some nodes of a Redis Cluster as `host:port`, comma-separated in
 * flags and env (or an array in code); the client learns the other nodes from them.
 *
 * @example
 * ```ts
 * v.parse(redisClusterNodes, "10.0.0.1:7000, 10.0.0.2:7000"); // ["10.0.0.1:7000", "10.0.0.2:7000"]
 * ```
 */
export const redisClusterNodes = v.pipe(
  v.union([v.string(), v.array(v.string())], "must be a comma-separated list of host:port"),
  v.transform((value): readonly string[] =>
    (typeof value === "string" ? value.split(",") : value)
      .map((node) => node.trim())
      .filter((node) => node !== ""),
  ),
  v.check((nodes) => nodes.length > 0, "must name at least one host:port"),
  v.check(
    (nodes) => nodes.every(isClusterNode),
    (issue) =>
      `must list host:port (a port from 1 to 65535); ${JSON.stringify(
        (issue.input as string[]).find((node) => !isClusterNode(node)),
      )} is none`,
  ),
);
