import * as v from "valibot";
import { InvalidArgumentError } from "../../../src/errors.js";
import type { SqlIsolation, SqlParam, SqlStatement } from "../../postgres-pool/types.js";
import type { HeaderLookup } from "../lock/request-headers.js";

/** Largest `/sql` request body (the statements and their parameters). */
export const SQL_BODY_LIMIT_BYTES = 1024 * 1024;
/** Most statements in one `{ "queries": [...] }` batch. */
export const MAX_BATCH_STATEMENTS = 100;

const PARAM_MESSAGE = "A parameter must be a string, number, boolean, null, or an array of those.";

/** A JSON value pg can send as a parameter: no objects (their meaning would be a guess). */
function isSqlParam(value: unknown): value is SqlParam {
  if (value === null) return true;
  const type = typeof value;
  if (type === "string" || type === "number" || type === "boolean") return true;
  return Array.isArray(value) && value.every(isSqlParam);
}

// Typed unknown here (valibot's inference does not end on a recursive type); checked by isSqlParam.
const ParamSchema = v.custom<unknown>(isSqlParam, PARAM_MESSAGE);

const StatementSchema = v.object(
  {
    query: v.pipe(v.string("Must be the SQL text."), v.minLength(1, "Must not be empty.")),
    params: v.optional(v.array(ParamSchema, "Must be an array of parameters."), () => []),
  },
  (issue) =>
    issue.received === "undefined" && issue.path?.length
      ? "Required."
      : 'Must be { "query": "...", "params": [...] }.',
);

const BatchSchema = v.object({
  queries: v.pipe(
    v.array(StatementSchema, "Must be an array of statements."),
    v.minLength(1, "Must hold at least one statement."),
    v.maxLength(MAX_BATCH_STATEMENTS, `Must hold at most ${MAX_BATCH_STATEMENTS} statements.`),
  ),
});

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
    arrayMode: isTrue(headers.get("neon-array-mode")),
    rawText: isTrue(headers.get("neon-raw-text-output")),
    isolation,
    deferrable: isTrue(headers.get("neon-batch-deferrable")),
  };
}

function isTrue(value: string | null): boolean {
  return value !== null && value.trim().toLowerCase() === "true";
}
