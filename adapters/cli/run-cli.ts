import { SluiceError } from "../../src/errors.js";
import { type CliIo, type CommandSpec, parseCommand, renderCommandHelp } from "./command.js";
import { applyCommand } from "./commands/apply.js";
import { keyCreateCommand, keyListCommand, keyRevokeCommand } from "./commands/key.js";
import { serveCommand } from "./commands/serve.js";
import { statusCommand } from "./commands/status.js";
import { teamCreateCommand } from "./commands/team.js";
import { tokenCreateCommand, tokenListCommand, tokenRevokeCommand } from "./commands/token.js";
import { userAddCommand } from "./commands/user.js";
import { userSetPasswordCommand } from "./commands/user-password.js";
import { userSignInLinkCommand } from "./commands/user-sign-in-link.js";
import { printableIo } from "./printable.js";
import { packageVersion } from "./version.js";

/** Every command, in the order `sluice --help` lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  serveCommand,
  teamCreateCommand,
  userAddCommand,
  userSetPasswordCommand,
  userSignInLinkCommand,
  tokenCreateCommand,
  tokenRevokeCommand,
  tokenListCommand,
  keyCreateCommand,
  keyRevokeCommand,
  keyListCommand,
  applyCommand,
  statusCommand,
];

/** Exit code of bad usage and bad input (unknown flag, invalid config). */
export const USAGE_EXIT_CODE = 2;

function usageLine(spec: CommandSpec): string {
  return [spec.name, ...(spec.positionals ?? [])].join(" ");
}

function commandList(commands: readonly CommandSpec[]): string[] {
  const width = Math.max(...commands.map((spec) => usageLine(spec).length));
  return commands.map((spec) => `  ${usageLine(spec).padEnd(width)}  ${spec.summary}`);
}

/**
 * The text of `sluice --help`.
 *
 * @example
 * ```ts
 * io.out(renderMainHelp());
 * ```
 */
export function renderMainHelp(): string {
  return [
    "Sluice: a concurrency governor for calls to upstream services.",
    "",
    "Usage: sluice <command> [options]",
    "",
    "Commands:",
    ...commandList(COMMANDS),
    "",
    'Run "sluice <command> --help" for the options of a command, "sluice --version" for the version.',
    "Commands use the data directory ./.sluice-data unless --data-dir or SLUICE_DATA_DIR says otherwise,",
    "or keep the catalog in PostgreSQL with --database-url or SLUICE_DATABASE_URL.",
  ].join("\n");
}

function renderGroupHelp(group: string, members: readonly CommandSpec[]): string {
  return [
    `Usage: sluice ${group} <command> [options]`,
    "",
    "Commands:",
    ...commandList(members),
    "",
    `Run "sluice ${group} <command> --help" for the options of a command.`,
  ].join("\n");
}

function isHelpFlag(word: string | undefined): boolean {
  return word === "--help" || word === "-h";
}

/** Finds the command named by the first one or two words; the rest are its arguments. */
function findCommand(argv: readonly string[]): { spec: CommandSpec; rest: string[] } | undefined {
  for (const spec of COMMANDS) {
    const words = spec.name.split(" ");
    if (words.every((word, index) => argv[index] === word))
      return { spec, rest: argv.slice(words.length) };
  }
  return undefined;
}

/** `sluice help <command>` / `sluice help <group>`: the help of what it names, else an error. */
function helpOn(words: readonly string[], io: CliIo): number {
  const target = findCommand(words);
  if (target && target.rest.length === 0) {
    io.out(renderCommandHelp(target.spec));
    return 0;
  }
  const [group] = words;
  const members = COMMANDS.filter((spec) => spec.name.startsWith(`${group} `));
  if (members.length > 0 && words.length === 1) {
    io.out(renderGroupHelp(group as string, members));
    return 0;
  }
  io.err(
    `Error: Unknown command "${words.join(" ")}". Run "sluice --help" for the list of commands.`,
  );
  return USAGE_EXIT_CODE;
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [first, second] = argv;
  if (first === undefined) {
    io.err(renderMainHelp());
    return USAGE_EXIT_CODE;
  }
  if (first === "--version" || first === "-v") {
    io.out(`sluice ${packageVersion()}`);
    return 0;
  }
  if (first === "help" && second !== undefined) return helpOn(argv.slice(1), io);
  if (isHelpFlag(first) || first === "help") {
    io.out(renderMainHelp());
    return 0;
  }
  const found = findCommand(argv);
  if (found) {
    const parsed = parseCommand(found.spec, found.rest);
    if (parsed === null) {
      io.out(renderCommandHelp(found.spec));
      return 0;
    }
    return found.spec.run(parsed, io);
  }
  const members = COMMANDS.filter((spec) => spec.name.startsWith(`${first} `));
  if (members.length > 0 && (second === undefined || isHelpFlag(second))) {
    if (second === undefined) {
      io.err(renderGroupHelp(first, members));
      return USAGE_EXIT_CODE;
    }
    io.out(renderGroupHelp(first, members));
    return 0;
  }
  if (members.length > 0 && second?.startsWith("-")) {
    io.err(
      `Error: Unknown option ${second}. Run "sluice ${first} --help" for the list of commands.`,
    );
    return USAGE_EXIT_CODE;
  }
  const what = first.startsWith("-")
    ? `Unknown option ${first}`
    : `Unknown command "${[first, ...(members.length > 0 ? [second] : [])].join(" ")}"`;
  io.err(`Error: ${what}. Run "sluice --help" for the list of commands.`);
  return USAGE_EXIT_CODE;
}

/**
 * Runs the `sluice` CLI and returns the exit code: 0 on success, 2 for bad usage or input
 * (unknown flag, invalid value, invalid configuration), 1 for other failures. Errors are
 * printed as one readable message, never a stack trace (set `SLUICE_DEBUG=1` for one), and
 * anything non-printable in what it prints is escaped (`\u001b`).
 *
 * @example
 * ```ts
 * process.exitCode = await runCli(process.argv.slice(2), {
 *   out: (line) => console.log(line), err: (line) => console.error(line), env: process.env,
 * });
 * ```
 */
export async function runCli(argv: readonly string[], rawIo: CliIo): Promise<number> {
  // Catalog text is printed as stored; escaping here covers every command and error message.
  const io = printableIo(rawIo);
  try {
    return await dispatch(argv, io);
  } catch (error) {
    io.err(`Error: ${describeError(error)}`);
    if (io.env.SLUICE_DEBUG && error instanceof Error && error.stack) io.err(error.stack);
    if (error instanceof SluiceError && error.code === "invalid_argument") return USAGE_EXIT_CODE;
    return 1;
  }
}

function describeError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
    const { address, port } = error as { address?: string; port?: number };
    const reasons: Record<string, string> = {
      EADDRINUSE: "the address is already in use (is another server running?)",
      EACCES: "permission denied (ports below 1024 need privileges)",
      EADDRNOTAVAIL: "this machine has no such address",
    };
    return `Cannot listen on ${address}:${port}: ${reasons[code]}.`;
  }
  return error instanceof Error ? error.message : String(error);
}
