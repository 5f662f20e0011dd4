/**
 * The benchmark's child processes: each contender of `servers.ts` runs in its own process,
 * from a tsup build (or under tsx), optionally with V8 CPU profiling.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROF;
/** How the contenders run: from a tsup build (default) or under tsx (`BENCH_RUNTIME=tsx`). */
export const RUNTIME = process.env.BENCH_RUNTIME === "tsx" ? "tsx" : "build";

const children: ChildProcess[] = [];
// Whatever happens, no contender outlives the benchmark.
process.once("exit", stopChildren);

/** Stops every contender process started so far. */
export function stopChildren(): void {
  for (const child of children) child.kill("SIGTERM");
}

/**
 * How the contenders' entry point is run: `node <bundle>` from a tsup build (esm, node20,
 * dependencies and optional dependencies external, as in `tsup.config.ts`), or `node --import tsx servers.ts`.
 */
async function serverCommand(): Promise<string[]> {
  const entry = join(HERE, "servers.ts");
  if (RUNTIME === "tsx") return ["--import", import.meta.resolve("tsx"), entry];
  // Inside the repository, so the bundle's bare imports resolve to its node_modules.
  const outDir = join(HERE, "../../node_modules/.cache/bench-lock-and-proxy");
  const { build } = await import("tsup");
  // tsup bundles optional dependencies (hono, undici, ...), as `tsup.config.ts` says: kept as
  // imports here too (undici's CommonJS `require("assert")` cannot run from an ESM bundle).
  const manifest = JSON.parse(readFileSync(join(HERE, "../../package.json"), "utf8"));
  await build({
    external: Object.keys(manifest.optionalDependencies ?? {}),
    entry: { servers: entry },
    outDir,
    format: ["esm"],
    target: "node20",
    config: false,
    silent: true,
    splitting: false,
    dts: false,
  });
  return [join(outDir, "servers.js")];
}

let command: Promise<string[]> | undefined;

/**
 * Starts `servers.ts <args>` in a child process and waits for its READY line. */
export async function startChild(
  ...args: string[]
): Promise<Record<string, unknown> & { port: number; pid: number | undefined }> {
  command ??= serverCommand();
  const profile =
    CPU_PROFILE_DIR && args[0] !== "upstream"
      ? ["--cpu-prof", `--cpu-prof-dir=${join(CPU_PROFILE_DIR, args[0] as string)}`]
      : [];
  const child = spawn(process.execPath, [...profile, ...(await command), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    if (line.startsWith("READY ")) return { ...JSON.parse(line.slice(6)), pid: child.pid };
  }
  throw new Error(`servers.ts ${args.join(" ")} exited before it was ready`);
}
