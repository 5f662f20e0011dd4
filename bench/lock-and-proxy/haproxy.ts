import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A running HAProxy with one frontend per backend, on loopback. */
export interface HaproxyRun {
  /** Frontend port of each backend, by name. */
  ports: Record<string, number>;
  /** Process id (to read its CPU time). */
  pid: number | undefined;
  stop(): void;
}

/** Whether an `haproxy` binary can be run here. */
export function haproxyAvailable(): boolean {
  return spawnSync("haproxy", ["-v"], { stdio: "ignore" }).status === 0;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitForPort(port: number, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`HAProxy did not open port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Starts HAProxy in the foreground with, per backend, `maxconn <limit>` on the server (the
 * same concurrency limit as the Sluice pool) and a queue (`timeout queue`), one thread (like
 * Sluice's single event loop), keep-alive on both sides.
 */
export async function startHaproxy(
  backends: Record<string, { upstreamPort: number; limit: number }>,
): Promise<HaproxyRun> {
  const ports: Record<string, number> = {};
  const sections: string[] = [];
  for (const [name, backend] of Object.entries(backends)) {
    const port = await freePort();
    ports[name] = port;
    sections.push(
      `frontend fe_${name}`,
      `  bind 127.0.0.1:${port}`,
      `  default_backend be_${name}`,
      `backend be_${name}`,
      `  server origin 127.0.0.1:${backend.upstreamPort} maxconn ${backend.limit}`,
    );
  }
  const config = [
    "global",
    "  maxconn 1000",
    "  nbthread 1",
    "defaults",
    "  mode http",
    "  option http-keep-alive",
    "  timeout connect 5s",
    "  timeout client 60s",
    "  timeout server 60s",
    "  timeout queue 30s",
    ...sections,
    "",
  ].join("\n");
  const dir = mkdtempSync(join(tmpdir(), "sluice-haproxy-"));
  const file = join(dir, "haproxy.cfg");
  writeFileSync(file, config);
  const child: ChildProcess = spawn("haproxy", ["-f", file, "-db"], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    for (const port of Object.values(ports)) await waitForPort(port);
  } catch (error) {
    child.kill("SIGTERM");
    throw error;
  }
  return {
    ports,
    pid: child.pid,
    stop: () => {
      if (child.pid !== undefined && child.exitCode === null) child.kill("SIGTERM");
    },
  };
}
