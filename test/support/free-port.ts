import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * A free loopback port below the kernel's ephemeral range. A port from `listen(0)` is in that
 * range, so under a parallel test run an outgoing connection or another `listen(0)` could take it
 * in the moment between closing the probe and the real server's bind (CI saw that happen).
 * For a server that must know its port before it binds; the others listen on port 0.
 *
 * @example
 * ```ts
 * const port = await portOutsideEphemeralRange();
 * spawn("redis-server", ["--port", String(port)]);
 * ```
 */
export async function portOutsideEphemeralRange(): Promise<number> {
  const low = ephemeralRangeStart();
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await bindable(port)) return port;
  }
}

function ephemeralRangeStart(): number {
  try {
    const range = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8");
    const low = Number(range.trim().split(/\s+/)[0]);
    return low > 20_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function bindable(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}
