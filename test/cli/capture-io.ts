import type { CliIo } from "../../adapters/cli/command.js";
import { runCli } from "../../adapters/cli/run-cli.js";

/** A CliIo that records lines, for running commands in-process with `runCli`. */
export interface CapturedIo {
  io: CliIo;
  stdout(): string;
  stderr(): string;
}

/**
 * @example
 * ```ts
 * const captured = captureIo({ SLUICE_DATA_DIR: dir });
 * expect(await runCli(["status"], captured.io)).toBe(0);
 * ```
 */
export function captureIo(env: Record<string, string | undefined> = {}): CapturedIo {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { out: (line) => out.push(line), err: (line) => err.push(line), env },
    stdout: () => out.map((line) => `${line}\n`).join(""),
    stderr: () => err.map((line) => `${line}\n`).join(""),
  };
}

/**
 * Runs `sluice <args>` in-process on the data directory `dir`.
 *
 * @example
 * ```ts
 * expect(await sluiceIn(dir, ["status"])).toMatchObject({ code: 0, stderr: "" });
 * ```
 */
export async function sluiceIn(dir: string, args: readonly string[]) {
  const captured = captureIo({ SLUICE_DATA_DIR: dir });
  const code = await runCli(args, captured.io);
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}
