import type { CliIo } from "../../adapters/cli/command.js";

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
