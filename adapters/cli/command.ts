import { parseArgs } from "node:util";
import { InvalidArgumentError } from "../../src/errors.js";

/** Where a command writes and what it reads from its surroundings. */
export interface CliIo {
  /** One line for the person (or script) reading standard output. */
  out(line: string): void;
  /** One line of diagnostics on standard error. */
  err(line: string): void;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where `serve` hears SIGINT/SIGTERM/SIGHUP; default {@link PROCESS_SIGNALS}. */
  readonly signals?: SignalSource;
  /**
   * Ends the process at once (a second SIGINT/SIGTERM during shutdown must not wait for open
   * connections); absent in tests, where the command just returns its exit code.
   */
  readonly exitNow?: (code: number) => void;
  /** Reads a secret (a password) from stdin or a prompt that does not echo; absent: none can be read. */
  readonly readSecret?: (prompt: string) => Promise<string>;
}

/** Lets `serve` wait for SIGINT/SIGTERM/SIGHUP without touching `process` in tests. */
export interface SignalSource {
  on(signal: "SIGINT" | "SIGTERM" | "SIGHUP", listener: () => void): void;
  off(signal: "SIGINT" | "SIGTERM" | "SIGHUP", listener: () => void): void;
}

/**
 * The current process's signals.
 *
 * @example
 * ```ts
 * const io: CliIo = { out: console.log, err: console.error, env: process.env, signals: PROCESS_SIGNALS };
 * ```
 */
export const PROCESS_SIGNALS: SignalSource = {
  on: (signal, listener) => process.on(signal, listener),
  off: (signal, listener) => process.off(signal, listener),
};

/** One flag of a command. */
export interface OptionSpec {
  type: "string" | "boolean";
  /** One line for the help text. */
  description: string;
  /** Shown after the flag in help, e.g. `<slug>`. */
  placeholder?: string;
  required?: boolean;
  short?: string;
}

/** A command: its flags, its help, and what it does. */
export interface CommandSpec {
  /** Words after `sluice`, e.g. `token create`. */
  name: string;
  summary: string;
  /** Positional arguments in order, e.g. `["<file.json>"]`; all required. */
  positionals?: readonly string[];
  options: Readonly<Record<string, OptionSpec>>;
  /** Extra paragraphs of help (defaults, notes). */
  details?: readonly string[];
  examples: readonly string[];
  /** Returns the process exit code. */
  run(args: ParsedCommand, io: CliIo): Promise<number>;
}

/** Flags and positionals of one invocation, after validation. */
export interface ParsedCommand {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/**
 * Reads a string flag that the spec marks as required (already checked by {@link parseCommand}).
 *
 * @example
 * ```ts
 * const slug = requiredString(args, "team");
 * ```
 */
export function requiredString(args: ParsedCommand, name: string): string {
  const value = args.values[name];
  if (typeof value !== "string") throw new InvalidArgumentError(`Missing --${name}.`);
  return value;
}

/**
 * Reads an optional string flag.
 *
 * @example
 * ```ts
 * const dataDir = optionalString(args, "data-dir");
 * ```
 */
export function optionalString(args: ParsedCommand, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * Parses argv for one command with `node:util` `parseArgs` in strict mode. Unknown flags,
 * missing values, missing required flags and extra positionals throw
 * {@link InvalidArgumentError} with a message that names the flag and points at `--help`.
 * Returns null when `--help` was asked for.
 *
 * @example
 * ```ts
 * const parsed = parseCommand(tokenCreateCommand, ["--team", "acme", "--json"]);
 * ```
 */
export function parseCommand(spec: CommandSpec, argv: readonly string[]): ParsedCommand | null {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {
    help: { type: "boolean", short: "h" },
  };
  for (const [name, option] of Object.entries(spec.options)) {
    options[name] = option.short
      ? { type: option.type, short: option.short }
      : { type: option.type };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: negativeValuesJoined(argv, options),
      options,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new InvalidArgumentError(usageMessage(spec, describeParseError(error)));
  }
  if (parsed.values.help === true) return null;
  const expected = spec.positionals ?? [];
  if (parsed.positionals.length > expected.length) {
    const extra = parsed.positionals[expected.length];
    throw new InvalidArgumentError(usageMessage(spec, `Unexpected argument "${extra}".`));
  }
  const missing = [
    ...expected.slice(parsed.positionals.length),
    ...Object.entries(spec.options)
      .filter(([name, option]) => option.required && parsed.values[name] === undefined)
      .map(([name]) => `--${name}`),
  ];
  if (missing.length > 0) {
    throw new InvalidArgumentError(usageMessage(spec, `Missing ${missing.join(", ")}.`));
  }
  return {
    values: parsed.values as Record<string, string | boolean | undefined>,
    positionals: parsed.positionals,
  };
}

/**
 * `--port -1` as `--port=-1`: parseArgs reads a value starting with `-` as another flag (and
 * then says the value is missing); a negative number is a value, checked like any other.
 */
function negativeValuesJoined(
  argv: readonly string[],
  options: Readonly<Record<string, { type: "string" | "boolean" }>>,
): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const next = argv[i + 1];
    const name = word.startsWith("--") ? word.slice(2) : null;
    if (name && options[name]?.type === "string" && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${word}=${next}`);
      i++;
    } else {
      joined.push(word);
    }
  }
  return joined;
}

function describeParseError(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /'(--?[\w-]+)/.exec(message)?.[1] ?? "";
  // parseArgs messages mention positional-argument escaping, which only confuses here.
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `Unknown option ${flag}.`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    return message.includes("does not take")
      ? `Option ${flag} does not take a value.`
      : `Option ${flag} needs a value (write ${flag}=<value> for one that starts with "-").`;
  }
  return message;
}

function usageMessage(spec: CommandSpec, problem: string): string {
  return `${problem} Run "sluice ${spec.name} --help" for usage.`;
}

/**
 * The help text of a command, generated from its spec so flags and help never drift apart.
 *
 * @example
 * ```ts
 * io.out(renderCommandHelp(statusCommand));
 * ```
 */
export function renderCommandHelp(spec: CommandSpec): string {
  const flagText = (name: string, option: OptionSpec) =>
    `--${name}${option.type === "string" ? ` ${option.placeholder ?? "<value>"}` : ""}`;
  const entries = Object.entries(spec.options);
  const required = entries
    .filter(([, option]) => option.required)
    .map(([name, option]) => flagText(name, option));
  const usage = ["sluice", spec.name, ...(spec.positionals ?? []), ...required];
  if (entries.some(([, option]) => !option.required)) usage.push("[options]");
  const rows = [
    ...entries.map(([name, option]) => {
      const short = option.short ? `-${option.short}, ` : "";
      const suffix = option.required ? " (required)" : "";
      return [`${short}${flagText(name, option)}`, `${option.description}${suffix}`] as const;
    }),
    ["-h, --help", "Show this help."] as const,
  ];
  const width = Math.max(...rows.map(([flag]) => flag.length));
  const lines = [
    spec.summary,
    "",
    `Usage: ${usage.join(" ")}`,
    "",
    "Options:",
    ...rows.map(([flag, description]) =>
      wrapText(`  ${flag.padEnd(width)}  ${description}`, width + 4),
    ),
  ];
  for (const paragraph of spec.details ?? []) lines.push("", wrapText(paragraph, 0));
  // Examples stay on one line each, so they can be copied as they are.
  lines.push("", "Examples:", ...spec.examples.map((example) => `  ${example}`));
  return lines.join("\n");
}

/** Help text is wrapped to this many columns (a terminal's usual 100 at most). */
const HELP_WIDTH = 100;

/**
 * Breaks `text` at spaces into lines of at most {@link HELP_WIDTH} columns; continuation lines
 * are indented by `indent` (under an option's description). A word longer than a line stays whole.
 */
function wrapText(text: string, indent: number): string {
  const lines: string[] = [];
  const leading = text.length - text.trimStart().length;
  let line = text.slice(0, leading);
  let started = false;
  // Split on single spaces, so runs of spaces (the padding after a flag) survive the rejoin.
  for (const word of text.slice(leading).split(" ")) {
    if (started && line.length + 1 + word.length > HELP_WIDTH) {
      lines.push(line);
      line = `${" ".repeat(indent)}${word}`;
    } else {
      line = started ? `${line} ${word}` : `${line}${word}`;
    }
    started = true;
  }
  lines.push(line);
  return lines.join("\n");
}

/**
 * Runs `work`, renaming the fields of a validation error to the command's flags, so the
 * person sees `--owner-email: Must be an email address.` rather than the record's field name.
 *
 * @example
 * ```ts
 * const result = await withFlagNames({ ownerEmail: "owner-email" }, () => catalog.createTeamWithOwner(input));
 * ```
 */
export async function withFlagNames<T>(
  flagsByField: Readonly<Record<string, string>>,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    const issues = error.issues.map((issue) => {
      const separator = issue.indexOf(": ");
      const flag = separator > 0 ? flagsByField[issue.slice(0, separator)] : undefined;
      return flag ? `--${flag}: ${issue.slice(separator + 2)}` : issue;
    });
    const message = issues.length === 1 ? issues[0]! : `Invalid input:\n  ${issues.join("\n  ")}`;
    throw new InvalidArgumentError(message, issues);
  }
}

/**
 * Reads an `--id` flag: a whole number from 1, else an {@link InvalidArgumentError} naming
 * what the id is of.
 *
 * @example
 * ```ts
 * parseIdFlag("3", "token"); // 3
 * parseIdFlag("x", "key"); // throws: --id must be a key id such as 3 (got "x").
 * ```
 */
export function parseIdFlag(text: string, what: string): number {
  const id = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(id) || id < 1) {
    throw new InvalidArgumentError(`--id must be a ${what} id such as 3 (got "${text}").`);
  }
  return id;
}
