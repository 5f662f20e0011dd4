import * as v from "valibot";
import { InvalidArgumentError } from "../../../src/errors.js";
import type { SqlIsolation, SqlStatement } from "../../postgres-pool/types.js";
import type { HeaderLookup } from "../lock/request-headers.js";

/** Largest `/sql` request body (the statements and their parameters). */
export const SQL_BODY_LIMIT_BYTES = 1024 * 1024;
/** Most statements in one `{ "queries": [...] }` batch. */
export const MAX_BATCH_STATEMENTS = 100;
/** Most parameters of one statement: the wire protocol counts them in 16 bits. */
export const MAX_STATEMENT_PARAMS = 65_535;
/** Deepest array nesting of a parameter: PostgreSQL arrays have at most 6 dimensions. */
export const MAX_PARAM_DEPTH = 6;

const PARAM_MESSAGE = "A parameter must be a string, number, boolean, null, or an array of those.";
const DEPTH_MESSAGE = `A parameter may nest arrays at most ${MAX_PARAM_DEPTH} deep (PostgreSQL arrays have at most ${MAX_PARAM_DEPTH} dimensions).`;

/**
 * Why a JSON value cannot be sent as a parameter (null when it can): objects have no
 * meaning to guess, and arrays past PostgreSQL's dimensions are refused before recursing
 * further, so a deeply nested body never runs the stack out.
 */
function paramProblem(value: unknown, depth = 0): string | null {
  if (value === null) return null;
  const type = typeof value;
  if (type === "string" || type === "number" || type === "boolean") return null;
  if (!Array.isArray(value)) return PARAM_MESSAGE;
  if (depth >= MAX_PARAM_DEPTH) return DEPTH_MESSAGE;
  for (const item of value) {
    const problem = paramProblem(item, depth + 1);
    if (problem) return problem;
  }
  return null;
}

// Typed unknown here (valibot's inference does not end on a recursive type); checked by paramProblem.
const ParamSchema = v.pipe(
  v.unknown(),
  v.rawCheck(({ dataset, addIssue }) => {
    const problem = dataset.typed ? paramProblem(dataset.value) : null;
    if (problem) addIssue({ message: problem });
  }),
);

/** The fields a statement may have: those the Neon driver sends. */
const STATEMENT_FIELDS = '{ "query": "...", "params": [...] }';

const StatementSchema = v.strictObject(
  {
    query: v.pipe(
      v.string("Must be the SQL text."),
      v.minLength(1, "Must not be empty."),
      // The wire protocol ends strings with NUL: PostgreSQL would answer a protocol violation.
      v.check((query) => !query.includes("\0"), "Must not contain a NUL character (U+0000)."),
    ),
    params: v.optional(
      v.pipe(
        v.array(ParamSchema, "Must be an array of parameters."),
        v.maxLength(
          MAX_STATEMENT_PARAMS,
          `Must hold at most ${MAX_STATEMENT_PARAMS} parameters (PostgreSQL's limit).`,
        ),
      ),
      () => [],
    ),
  },
  (issue) =>
    issue.received === "undefined" && issue.path?.length
      ? "Required."
      : issue.expected === "never"
        ? `Unknown field: a statement is ${STATEMENT_FIELDS}.`
        : `Must be ${STATEMENT_FIELDS}.`,
);

const BatchSchema = v.strictObject(
  {
    queries: v.pipe(
      v.array(StatementSchema, "Must be an array of statements."),
      v.minLength(1, "Must hold at least one statement."),
      v.maxLength(MAX_BATCH_STATEMENTS, `Must hold at most ${MAX_BATCH_STATEMENTS} statements.`),
    ),
  },
  (issue) =>
    issue.expected === "never"
      ? 'Unknown field: a batch is { "queries": [...] } alone (send "query" or "queries", not both).'
      : 'Must be { "queries": [...] }.',
);

/** A `/sql` request body: one statement, or a batch run in one transaction. */
export type SqlBody =
  | { batch: false; statements: [SqlStatement] }
  | { batch: true; statements: SqlStatement[] };

/**
 * Reads a `/sql` body (Neon's HTTP format): `{ "query", "params" }`, or `{ "queries": [...] }`
 * for a batch. Any content type is taken (the Neon driver sends `text/plain`). Throws
 * {@link InvalidArgumentError} (400 `invalid_request`) naming what is wrong and where.
 *
 * @example
 * ```ts
 * parseSqlBody(new TextEncoder().encode('{"query":"SELECT $1::int","params":[1]}'));
 * // { batch: false, statements: [{ query: "SELECT $1::int", params: [1] }] }
 * ```
 */
export function parseSqlBody(bytes: Uint8Array): SqlBody {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString());
  } catch {
    throw new InvalidArgumentError(
      'The request body is not valid JSON: send { "query": "...", "params": [...] }.',
    );
  }
  const isBatch = typeof value === "object" && value !== null && "queries" in value;
  const parsed = isBatch ? v.safeParse(BatchSchema, value) : v.safeParse(StatementSchema, value);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = v.getDotPath(issue);
    throw new InvalidArgumentError(path ? `${path}: ${issue.message}` : issue.message);
  }
  if ("queries" in parsed.output) {
    return { batch: true, statements: parsed.output.queries as SqlStatement[] };
  }
  return { batch: false, statements: [parsed.output as SqlStatement] };
}

/** How the caller wants its answer (Neon's request headers). */
export interface SqlOptions {
  /** `Neon-Array-Mode: true`: rows as arrays (else objects keyed by column name). */
  arrayMode: boolean;
  /** `Neon-Raw-Text-Output: true`: every value in PostgreSQL's text form. */
  rawText: boolean;
  /** `Neon-Batch-Isolation-Level` of a batch. */
  isolation: SqlIsolation | undefined;
  /** `Neon-Batch-Deferrable: true` of a batch. */
  deferrable: boolean;
}

const ISOLATION_BY_HEADER: Readonly<Record<string, SqlIsolation>> = {
  // PostgreSQL runs READ UNCOMMITTED as READ COMMITTED.
  readuncommitted: "read committed",
  readcommitted: "read committed",
  repeatableread: "repeatable read",
  serializable: "serializable",
};

/**
 * The Neon headers of a `/sql` request. `Neon-Batch-Read-Only` is not read: every
 * transaction is read-only. `Neon-Connection-String` is never read (see `stripConnectionString`).
 *
 * @example
 * ```ts
 * sqlOptions(headers); // { arrayMode: true, rawText: true, isolation: undefined, deferrable: false }
 * ```
 */
export function sqlOptions(headers: HeaderLookup): SqlOptions {
  const isolationHeader = headers.get("neon-batch-isolation-level");
  let isolation: SqlIsolation | undefined;
  if (isolationHeader !== null) {
    isolation = ISOLATION_BY_HEADER[isolationHeader.toLowerCase()];
    if (!isolation) {
      throw new InvalidArgumentError(
        "Neon-Batch-Isolation-Level must be ReadUncommitted, ReadCommitted, RepeatableRead or Serializable.",
      );
    }
  }
  return {
    arrayMode: flag(headers, "Neon-Array-Mode"),
    rawText: flag(headers, "Neon-Raw-Text-Output"),
    isolation,
    deferrable: flag(headers, "Neon-Batch-Deferrable"),
  };
}

/** A true/false header (absent: false); any other value is refused, not read as false. */
function flag(headers: HeaderLookup, name: string): boolean {
  const value = headers.get(name.toLowerCase())?.trim().toLowerCase();
  if (value === undefined || value === "false") return false;
  if (value === "true") return true;
  throw new InvalidArgumentError(`${name} must be true or false.`);
}
