import { randomBytes } from "node:crypto";
import { cliEnv, tempDir } from "../cli/cli-process.js";
import { type ClusterNode, startCluster, stopCluster } from "../redis/e2e-cluster.js";
import { Endpoint } from "../redis/e2e-http.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../redis/redis-harness.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";

/** `sluice serve` processes of one test file on one fresh PostgreSQL database and one Redis. */
export interface PostgresFleet {
  /** The Redis key prefix of the fleet's slots. */
  readonly prefix: string;
  /** A temporary directory for the run's files (removed by {@link stop}). */
  dir(): string;
  /** Creates the database (once) and answers the environment of every CLI and server process. */
  env(): Promise<Record<string, string>>;
  /**
   * Starts `count` servers with that environment, and resolves once all listen. With
   * `dataDirPerServer`, each has a data directory of its own, as machines of a fleet do.
   */
  start(
    count: number,
    options?: { dataDirPerServer?: boolean },
  ): Promise<{ nodes: ClusterNode[]; endpoints: Endpoint[] }>;
  /** Stops the servers and removes the database, the Redis keys and the directory. */
  stop(): Promise<void>;
}

/**
 * A fleet for one test file (see {@link PostgresFleet}); call `stop()` in `afterAll`.
 *
 * @example
 * ```ts
 * const fleet = postgresFleet("pg_fleet_e2e");
 * afterAll(() => fleet.stop());
 * await sluiceOk(CREATE_ACME, await fleet.env());
 * const { endpoints } = await fleet.start(3);
 * ```
 */
export function postgresFleet(suite: string): PostgresFleet {
  const prefix = uniquePrefix(suite);
  let temp: ReturnType<typeof tempDir> | null = null;
  let database: TestDatabase | null = null;
  let env: Record<string, string> | null = null;
  const nodes: ClusterNode[] = [];
  const endpoints: Endpoint[] = [];
  const dir = () => {
    temp ??= tempDir(`sluice-${suite}-`);
    return temp.dir;
  };
  const envOf = async () => {
    database ??= await createTestDatabase(suite);
    env ??= cliEnv({
      SLUICE_SECRET_KEY: randomBytes(32).toString("base64"),
      SLUICE_DATABASE_URL: database.url,
    });
    return env;
  };
  return {
    prefix,
    dir,
    env: envOf,
    async start(count, options = {}) {
      const started = await startCluster({
        count,
        dataDir: dir(),
        ...options,
        redisUrl: REDIS_URL,
        redisPrefix: prefix,
        env: await envOf(),
      });
      nodes.push(...started);
      const reached = started.map((node) => new Endpoint(node.name, node.port));
      endpoints.push(...reached);
      return { nodes: started, endpoints: reached };
    },
    async stop() {
      for (const endpoint of endpoints) endpoint.close();
      await stopCluster(nodes);
      await deleteKeys(prefix);
      await database?.drop();
      temp?.cleanup();
    },
  };
}
