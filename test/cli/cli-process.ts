import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root: the CLI runs from source through tsx, as `npx tsx adapters/cli/main.ts` does. */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI_ENTRY = join(REPO_ROOT, "adapters/cli/main.ts");

/** `sluice` arguments creating team acme with its owner Ada Lovelace <ada@example.com>. */
export const CREATE_ACME: readonly string[] = [
  "team",
  "create",
  "--name",
  "Acme",
  "--slug",
  "acme",
  "--owner-name",
  "Ada Lovelace",
  "--owner-email",
  "ada@example.com",
];

/** What a finished CLI process left behind. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A clean environment: no SLUICE_* from the developer's shell leaks into a test. */
export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("SLUICE_")) env[name] = value;
  }
  return { ...env, ...extra };
}

function spawnCli(
  args: readonly string[],
  env: Record<string, string>,
  stdin: "ignore" | "pipe" = "ignore",
): ChildProcess {
  // `node --import tsx` is `npx tsx` without the npm and tsx wrapper processes, so signals
  // sent to the child reach the CLI itself.
  return spawn(process.execPath, ["--import", "tsx", CLI_ENTRY, ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: [stdin, "pipe", "pipe"],
  });
}

/**
 * Runs `sluice <args>` to completion, with `input` piped to its stdin when given.
 *
 * @example
 * ```ts
 * const { code, stdout } = await runSluice(["--help"]);
 * await runSluice(["user", "set-password", "--email", "ada@example.com"], cliEnv(), "correct horse battery staple\n");
 * ```
 */
export function runSluice(
  args: readonly string[],
  env: Record<string, string> = cliEnv(),
  input?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, env, input === undefined ? "ignore" : "pipe");
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** A long-running `sluice serve`. */
export interface RunningSluice {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout; rejects on exit or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends `signal` and resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

/**
 * Starts `sluice <args>` and keeps it running.
 *
 * @example
 * ```ts
 * const server = startSluice(["serve", "--port", "0", "--data-dir", dir]);
 * const [, url] = await server.waitFor(/Control API: (\S+)\/api\/v1/);
 * ```
 */
export function startSluice(
  args: readonly string[],
  env: Record<string, string> = cliEnv(),
): RunningSluice {
  const child = spawnCli(args, env);
  let stdout = "";
  let stderr = "";
  const exited = new Promise<CliResult>((resolve) => {
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  const watchers = new Set<() => void>();
  child.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const check of watchers) check();
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(
            new Error(`Timed out waiting for ${pattern}.\nstdout:\n${stdout}\nstderr:\n${stderr}`),
          );
        }, timeoutMs);
        const check = () => {
          const match = stdout.match(pattern);
          if (!match) return;
          clearTimeout(timer);
          watchers.delete(check);
          resolve(match);
        };
        watchers.add(check);
        check();
        exited.then((result) => {
          if (!watchers.has(check)) return;
          clearTimeout(timer);
          watchers.delete(check);
          reject(
            new Error(
              `sluice exited (${result.code}) before ${pattern}.\nstdout:\n${stdout}\nstderr:\n${stderr}`,
            ),
          );
        });
      });
    },
    stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * A fresh temporary directory, removed by the returned cleanup.
 *
 * @example
 * ```ts
 * const { dir, cleanup } = tempDir();
 * afterEach(cleanup);
 * ```
 */
export function tempDir(prefix = "sluice-cli-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
