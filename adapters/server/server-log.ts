import type { ServerConfig } from "./config.js";

/** How log lines are written: readable text, or one JSON object a line. */
export type LogFormat = ServerConfig["logFormat"];

/** Severity of a log line. */
export type LogLevel = "info" | "warn" | "error";

/**
 * Structured details of a line: names and numbers. Strings may come from the request (a
 * path, a Host, a request id); {@link formatLogLine} scrubs secrets out of each.
 */
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

/**
 * Formats one log line. Text: the message, then `name=value` for each field (values with
 * spaces, quotes or control characters quoted as JSON strings, so a hostile path or pool
 * name cannot forge a line). JSON: `{"time","level","msg",...fields}`. The message and every
 * string field go through {@link scrubSecrets} first.
 *
 * @example
 * ```ts
 * formatLogLine("text", "error", "Origin failed", { pool: "chat", status: 502 }, 0);
 * // 'Origin failed pool=chat status=502'
 * formatLogLine("json", "info", "Listening on 127.0.0.1:8080", {}, 0);
 * // '{"time":"1970-01-01T00:00:00.000Z","level":"info","msg":"Listening on 127.0.0.1:8080"}'
 * ```
 */
export function formatLogLine(
  format: LogFormat,
  level: LogLevel,
  message: string,
  fields: LogFields,
  now: number,
  options: { scrub?: boolean } = {},
): string {
  const msg = options.scrub === false ? message : scrubSecrets(message);
  if (format === "json") {
    const line: Record<string, unknown> = { time: new Date(now).toISOString(), level, msg };
    for (const name in fields) line[name] = scrubbedValue(fields[name]);
    return JSON.stringify(line);
  }
  let line = msg;
  for (const name in fields) {
    const value = scrubbedValue(fields[name]);
    if (value === undefined) continue;
    line += ` ${name}=${textValue(value)}`;
  }
  return line;
}

/**
 * Every string of every line is scrubbed, not only causes: a caller may put a key or token
 * where Sluice logs a name (the path, the Host header, X-Request-Id).
 */
function scrubbedValue<T extends LogFields[string]>(value: T): T | string {
  return typeof value === "string" ? scrubSecrets(value) : value;
}

function textValue(value: string | number | boolean | null): string {
  if (typeof value !== "string") return String(value);
  // Printable ASCII without spaces, quotes or "=" stays bare; anything else is quoted.
  return /^[\x21\x23-\x3c\x3e-\x7e]+$/.test(value) ? value : JSON.stringify(value);
}

/** The server's log: progress lines, error lines and access lines, in one format. */
export interface ServerLog {
  readonly format: LogFormat;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /**
   * An info line whose message is written as given, not scrubbed: only for a secret the
   * operator is meant to read here (a one-time sign-in or setup link printed at start).
   */
  reveal(message: string): void;
}

/**
 * A {@link ServerLog} writing each formatted line to `write` (the CLI's standard output), and
 * warnings and errors to `writeProblem` when given (its standard error).
 *
 * @example
 * ```ts
 * const log = createServerLog("json", (line) => process.stdout.write(`${line}\n`));
 * log.info("Listening on 127.0.0.1:8080");
 * ```
 */
export function createServerLog(
  format: LogFormat,
  write: (line: string) => void,
  writeProblem: (line: string) => void = write,
  now: () => number = Date.now,
): ServerLog {
  const at = (level: LogLevel) => {
    const sink = level === "info" ? write : writeProblem;
    return (message: string, fields: LogFields = {}) =>
      sink(formatLogLine(format, level, message, fields, now()));
  };
  return {
    format,
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    reveal: (message) => write(formatLogLine(format, "info", message, {}, now(), { scrub: false })),
  };
}

/**
 * Hides what may be a secret inside free text (an error message, a URL): Sluice's own secrets
 * (`slc_…`), the user and password of a URL, and its query. Applied to every string of every
 * line logged.
 *
 * @example
 * ```ts
 * scrubSecrets("connect to http://user:pw@10.0.0.5/?key=1 failed"); // "connect to http://***@10.0.0.5/?*** failed"
 * ```
 */
export function scrubSecrets(text: string): string {
  return text
    .replace(/slc_[a-z]+_[A-Za-z0-9_-]*/g, "slc_***")
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^/?#\s@]*@/gi, "$1***@")
    .replace(/([a-z][a-z0-9+.-]*:\/\/[^?#\s]*)\?\S*/gi, "$1?***")
    .replace(/\b(bearer|basic|service)\s+\S+/gi, "$1 ***");
}
