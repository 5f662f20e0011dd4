import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { RedisKeys } from "../../adapters/redis/index.js";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { cliEnv, type RunningSluice, runSluice, startSluice } from "../cli/cli-process.js";

/** One `sluice serve` child process of the cluster. */
export interface ClusterNode {
  readonly name: string;
  readonly port: number;
  readonly process: RunningSluice;
}

/** Runs `sluice <args>` and fails with its output unless it exits 0. */
export async function sluiceOk(args: readonly string[], env: Record<string, string>) {
  const result = await runSluice(args, env);
  if (result.code !== 0) {
    throw new Error(
      `sluice ${args.join(" ")} exited ${result.code}\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result;
}

/**
 * Prepares a data directory: the team directly in the catalog (one CLI start less on a slow
 * machine), then its budgets and pools the way an operator declares them, `sluice apply`.
 */
export async function prepareCatalog(
  dataDir: string,
  config: Record<string, unknown>,
  env: Record<string, string>,
): Promise<void> {
  const data = await openDataDir({ dataDir, secretKey: env.SLUICE_SECRET_KEY });
  try {
    await data.catalog.store.createTeam({ name: "E2E", slug: String(config.team) });
  } finally {
    data.close();
  }
  const file = join(dataDir, "sluice.config.json");
  writeFileSync(file, JSON.stringify(config, null, 2));
  await sluiceOk(["apply", file, "--data-dir", dataDir], env);
}

/**
 * Starts `count` `sluice serve` processes on one data directory and one Redis (under
 * `redisPrefix`), each on a free port, and resolves once all of them listen. With
 * `dataDirPerServer`, each has a directory of its own under `dataDir` instead, as machines of
 * a fleet on a PostgreSQL catalog (`SLUICE_DATABASE_URL` in `env`) share nothing on disk.
 */
export async function startCluster(options: {
  count: number;
  dataDir: string;
  dataDirPerServer?: boolean;
  redisUrl: string;
  redisPrefix: string;
  env: Record<string, string>;
}): Promise<ClusterNode[]> {
  const starting = Array.from({ length: options.count }, async (_, index) => {
    const dataDir = options.dataDirPerServer
      ? join(options.dataDir, `server-${index + 1}`)
      : options.dataDir;
    const process = startSluice(
      [
        "serve",
        ...["--port", "0", "--data-dir", dataDir],
        ...["--redis-url", options.redisUrl, "--redis-prefix", options.redisPrefix],
        ...["--shutdown-grace-ms", "1000"],
      ],
      options.env,
    );
    try {
      const [, port] = await process.waitFor(
        /Control API: http:\/\/localhost:(\d+)\/api\/v1/,
        45_000,
      );
      return { name: `server-${index + 1}`, port: Number(port), process };
    } catch (error) {
      await process.stop("SIGKILL");
      throw error;
    }
  });
  const settled = await Promise.allSettled(starting);
  const nodes = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failed = settled.find((result) => result.status === "rejected");
  if (failed) {
    await stopCluster(nodes);
    throw failed.reason;
  }
  return nodes;
}

/** Stops every node still running (SIGTERM, graceful). */
export async function stopCluster(nodes: readonly ClusterNode[]): Promise<void> {
  await Promise.all(nodes.map((node) => node.process.stop("SIGTERM")));
}

/** The environment of every CLI and server process of a run (one secret key for all). */
export function clusterEnv(secretKey: string): Record<string, string> {
  return cliEnv({ SLUICE_SECRET_KEY: secretKey });
}

/** Slot ids Redis holds for `pool` (read from the store's documented key layout). */
export async function heldIds(redis: Redis, prefix: string, pool: string): Promise<string[]> {
  const pattern = new RedisKeys(prefix).pattern().replace(/\*$/, `*:holders:${pool}`);
  const keys = await redis.keys(pattern);
  const ids = await Promise.all(keys.map((key) => redis.zrange(key, 0, -1)));
  return ids.flat();
}
