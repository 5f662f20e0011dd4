import { type ChildProcess, spawnSync } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import { tempDir } from "../cli/cli-process.js";
import {
  answering,
  redisServerProcess,
  startRedisServer,
  withNode,
} from "./redis-server-process.js";

/** One redis-server of the test cluster. */
export interface ClusterServer {
  readonly port: number;
  readonly address: string;
  readonly args: readonly string[];
  process: ChildProcess | null;
}

/** A real Redis Cluster on loopback ports, started by a test file and stopped after it. */
export interface TestCluster {
  readonly servers: readonly ClusterServer[];
  /** `host:port` of every server (masters and replicas), as `--redis-cluster-nodes` takes them. */
  readonly nodes: string[];
  /** The same as a `redis+cluster://` URL. */
  readonly url: string;
  /** `host:port` of the master that holds `key` now. */
  masterOf(key: string): Promise<string>;
  /** `host:port` of every master now. */
  masters(): Promise<string[]>;
  /** Kills one server at once (`SIGKILL`: no goodbye to the cluster). */
  kill(address: string): void;
  /**
   * Starts a killed server again on its port and cluster config (it rejoins in its old role,
   * without data: nothing is persisted); resolves once it answers.
   */
  restart(address: string): Promise<void>;
  /** Resolves once every live server reports the cluster ok and `key`'s slot has a live master. */
  settled(key?: string): Promise<void>;
  stop(): void;
}

/**
 * Whether redis-server and redis-cli are installed: under CI their absence fails the run,
 * elsewhere the cluster tests are skipped with a loud warning.
 */
export function requireClusterBinaries(suite: string): boolean {
  const missing = ["redis-server", "redis-cli"].filter(
    (binary) => spawnSync(binary, ["--version"]).error,
  );
  if (missing.length === 0) return true;
  const message = `${missing.join(" and ")} not installed: ${suite} cannot run.`;
  if (process.env.CI === "true") throw new Error(message);
  console.warn(`\n!!! ${message} Skipping. !!!\n`);
  return false;
}

/**
 * Starts `masters` × (1 + `replicas`) redis-servers in cluster mode on free loopback ports
 * (data in a temp dir, no persistence) and joins them with `redis-cli --cluster create`.
 * A short node timeout makes a failover take about two seconds; `cluster-require-full-coverage
 * no` keeps the other shards serving while one has no master.
 *
 * @example
 * ```ts
 * const cluster = await startTestCluster({ masters: 3, replicas: 1 });
 * afterAll(() => cluster.stop());
 * ```
 */
export async function startTestCluster(options: {
  masters: number;
  replicas: number;
}): Promise<TestCluster> {
  const { dir, cleanup } = tempDir("sluice-redis-cluster-");
  const servers: ClusterServer[] = [];
  const stop = () => {
    for (const server of servers) server.process?.kill("SIGKILL");
    cleanup();
  };
  try {
    for (let i = 0; i < options.masters * (1 + options.replicas); i++) {
      const { port, args, started } = await startRedisServer((port, busPort) => [
        ...["--cluster-enabled", "yes", "--cluster-port", String(busPort)],
        ...["--cluster-config-file", join(dir, `nodes-${port}.conf`)],
        ...["--cluster-node-timeout", "1000", "--cluster-require-full-coverage", "no"],
        // A replica lagging on a loaded machine still takes over (the test wants the failover).
        ...["--cluster-replica-validity-factor", "0"],
        // A replica gets its first copy at once (the default waits 5 s for more replicas):
        // until it has one, a failover promotes an empty replica and the test loses its data.
        ...["--repl-diskless-sync-delay", "0"],
        ...["--dir", dir],
      ]);
      servers.push({ port, address: `127.0.0.1:${port}`, args, process: started.process });
    }
    const created = spawnSync(
      "redis-cli",
      [
        "--cluster",
        "create",
        ...servers.map((server) => server.address),
        "--cluster-replicas",
        String(options.replicas),
        "--cluster-yes",
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create: ${created.stdout}`);
  } catch (error) {
    stop();
    throw error;
  }
  const nodes = servers.map((server) => server.address);
  const live = () => servers.filter((server) => server.process !== null);
  const cluster: TestCluster = {
    servers,
    nodes,
    url: `redis+cluster://${nodes.join(",")}`,
    masterOf: (key) =>
      withNode(live()[0]!, async (redis) => {
        const owner = await ownerOf(redis, key);
        if (owner === null) throw new Error(`no live master holds ${key}`);
        return owner;
      }),
    masters: () => withNode(live()[0]!, masterAddresses),
    kill(address) {
      const server = servers.find((candidate) => candidate.address === address);
      server?.process?.kill("SIGKILL");
      if (server) server.process = null;
    },
    async restart(address) {
      const server = servers.find((candidate) => candidate.address === address)!;
      const started = redisServerProcess(server.args);
      server.process = started.process;
      await answering(server.port, started);
    },
    async settled(key = "probe") {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const views = await Promise.all(
          live().map((server) =>
            withNode(server, async (redis) => {
              const state = /cluster_state:(\w+)/.exec(String(await redis.cluster("INFO")))?.[1];
              return `${server.address}: ${state}, ${key} on ${await ownerOf(redis, key)}`;
            }).catch((error: Error) => `${server.address}: ${error.message}`),
          ),
        );
        const ok = (view: string) =>
          view.includes(": ok, ") && live().some((s) => view.endsWith(` on ${s.address}`));
        if (views.every(ok)) return;
        if (Date.now() > deadline) {
          throw new Error(`the test cluster did not settle in 30 s:\n${views.join("\n")}`);
        }
        await sleep(100);
      }
    },
    stop,
  };
  try {
    await cluster.settled();
    await replicasInSync(servers);
  } catch (error) {
    stop();
    throw error;
  }
  return cluster;
}

/** Waits until every replica has its master's data (the link up, the first sync done). */
async function replicasInSync(servers: readonly ClusterServer[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lagging = (
      await Promise.all(
        servers.map((server) =>
          withNode(server, async (redis) => {
            const info = String(await redis.info("replication"));
            const syncing =
              info.includes("role:slave") &&
              (!info.includes("master_link_status:up") ||
                info.includes("master_sync_in_progress:1"));
            return syncing ? server.address : null;
          }),
        ),
      )
    ).filter((address) => address !== null);
    if (lagging.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`replicas not in sync with their masters in 30 s: ${lagging.join(", ")}`);
    }
    await sleep(100);
  }
}

/** `CLUSTER SHARDS` flattened: each shard's live master as `host:port`, and its slot ranges. */
async function shards(redis: Redis): Promise<{ master: string | null; ranges: number[] }[]> {
  const reply = (await redis.call("CLUSTER", "SHARDS")) as unknown[][];
  return reply.map((shard) => {
    const fields = pairs(shard);
    const ranges = (fields.get("slots") as (number | string)[]).map(Number);
    const master = (fields.get("nodes") as unknown[][])
      .map(pairs)
      .find((node) => node.get("role") === "master" && node.get("health") === "online");
    return { master: master ? `127.0.0.1:${master.get("port")}` : null, ranges };
  });
}

function pairs(list: unknown[]): Map<string, unknown> {
  const map = new Map<string, unknown>();
  for (let i = 0; i < list.length; i += 2) map.set(String(list[i]), list[i + 1]);
  return map;
}

async function ownerOf(redis: Redis, key: string): Promise<string | null> {
  const slot = Number(await redis.cluster("KEYSLOT", key));
  for (const shard of await shards(redis)) {
    for (let i = 0; i < shard.ranges.length; i += 2) {
      if (slot >= shard.ranges[i]! && slot <= shard.ranges[i + 1]!) return shard.master;
    }
  }
  return null;
}

async function masterAddresses(redis: Redis): Promise<string[]> {
  // A node joined as a replica shows as a master of no slots until its role has spread.
  return (await shards(redis))
    .filter((shard) => shard.ranges.length > 0)
    .map((shard) => shard.master)
    .filter((master): master is string => master !== null);
}
