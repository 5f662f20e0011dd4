import { type ChildProcess, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { portOutsideEphemeralRange } from "../support/free-port.js";

/** A redis-server child process of a test, and what it printed. */
export interface RedisServerProcess {
  readonly process: ChildProcess;
  /** The end of what redis-server printed (its reason, when it exits at once). */
  readonly output: () => string;
  exited: boolean;
}

/**
 * Starts a redis-server of the test's own on a free loopback port (no persistence), with the
 * extra `argsFor(port, spare)` (`spare` is a second free port, for a cluster bus). A port can
 * still be taken between the check and redis-server's bind, so a server that exits before it
 * answers is started again on other ports.
 *
 * @example
 * ```ts
 * const { port, started } = await startRedisServer(() => ["--maxmemory", "100mb"]);
 * afterAll(() => started.process.kill("SIGKILL"));
 * ```
 */
export async function startRedisServer(
  argsFor: (port: number, spare: number) => string[],
): Promise<{ port: number; args: string[]; started: RedisServerProcess }> {
  for (let attempt = 1; ; attempt++) {
    const port = await portOutsideEphemeralRange();
    const spare = await portOutsideEphemeralRange();
    const args = [
      ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      ...argsFor(port, spare),
    ];
    const started = redisServerProcess(args);
    try {
      await answering(port, started);
      return { port, args, started };
    } catch (error) {
      started.process.kill("SIGKILL");
      if (attempt === 3) throw error;
    }
  }
}

/** Spawns redis-server with `args`, keeping the end of its output. */
export function redisServerProcess(args: readonly string[]): RedisServerProcess {
  const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-2_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const started: RedisServerProcess = { process: child, output: () => output, exited: false };
  child.once("exit", () => {
    started.exited = true;
  });
  return started;
}

/** Resolves once the server answers PING; fails at once when it exits, or after 15 s. */
export async function answering(port: number, server: RedisServerProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!server.exited && Date.now() < deadline) {
    if (await pongs(port)) return;
    await sleep(50);
  }
  const why = server.exited ? `exited: ${server.output().trim()}` : "did not answer in 15 s";
  throw new Error(`redis-server on port ${port} ${why}`);
}

function pongs(port: number): Promise<boolean> {
  return withNode({ port }, async (redis) => (await redis.ping()) === "PONG").catch(() => false);
}

/**
 * Runs `use` on a fresh connection to one loopback server (no retries, no redirects; a
 * cluster node answers for itself), disconnected afterwards.
 *
 * @example
 * ```ts
 * const info = await withNode({ port }, (redis) => redis.cluster("INFO"));
 * ```
 */
export async function withNode<T>(
  server: { port: number },
  use: (redis: Redis) => Promise<T>,
): Promise<T> {
  const redis = new Redis({
    port: server.port,
    host: "127.0.0.1",
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}
