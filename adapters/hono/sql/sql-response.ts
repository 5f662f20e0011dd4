import type { SqlErrorFields, SqlField, SqlResult } from "../../postgres-pool/types.js";
import type { SqlOptions } from "./sql-request.js";

/** PostgreSQL type ids whose text JSON carries exactly as a number. */
const NUMBER_TYPES: ReadonlySet<number> = new Set([21, 23, 26, 700, 701]);
const BOOL_TYPE = 16;
const JSON_TYPES: ReadonlySet<number> = new Set([114, 3802]);

type JsonValue = string | number | boolean | null | object;

/**
 * One statement's result in Neon's HTTP format: `{ command, rowCount, rows, fields, rowAsArray }`.
 * Values are PostgreSQL's text (what the Neon driver asks for with `Neon-Raw-Text-Output`
 * and parses itself), or else JSON values where JSON carries them exactly: booleans, int2,
 * int4, oid, float4/float8 (finite), json/jsonb; int8, numeric and everything else as text.
 *
 * @example
 * ```ts
 * sqlResultBody(result, { arrayMode: true, rawText: true, isolation: undefined, deferrable: false });
 * ```
 */
export function sqlResultBody(result: SqlResult, options: SqlOptions): Record<string, unknown> {
  const { fields } = result;
  return {
    command: result.command,
    rowCount: result.rowCount,
    rows: result.rows.map((row) => formatRow(row, fields, options)),
    fields,
    rowAsArray: options.arrayMode,
  };
}

/**
 * How many bytes a row takes in the answer {@link sqlResultBody} gives: its JSON (column
 * names, quotes, escapes, `null`s included) and the comma before it. The runner counts rows
 * with it as they arrive, so `maxResultBytes` bounds what is actually sent.
 *
 * @example
 * ```ts
 * runner.run(target, { ...batch, rowBytes: sqlRowBytes(options) }, signal);
 * ```
 */
export function sqlRowBytes(
  options: SqlOptions,
): (row: readonly (string | null)[], fields: readonly SqlField[]) => number {
  return (row, fields) => Buffer.byteLength(JSON.stringify(formatRow(row, fields, options))) + 1;
}

function formatRow(
  row: readonly (string | null)[],
  fields: readonly SqlField[],
  options: SqlOptions,
): JsonValue {
  const values = options.rawText ? row : row.map((value, i) => typed(value, fields[i]?.dataTypeID));
  if (options.arrayMode) return values;
  const object: Record<string, JsonValue> = {};
  fields.forEach((field, i) => {
    object[field.name] = values[i] ?? null;
  });
  return object;
}

function typed(value: string | null, typeId: number | undefined): JsonValue {
  if (value === null || typeId === undefined) return value;
  if (typeId === BOOL_TYPE) return value === "t";
  if (NUMBER_TYPES.has(typeId)) {
    const number = Number(value);
    return Number.isFinite(number) ? number : value;
  }
  if (JSON_TYPES.has(typeId)) return JSON.parse(value) as JsonValue;
  return value;
}

/** SQLSTATEs of a write the database refused: insufficient_privilege, read_only_sql_transaction. */
const REFUSED_WRITE_STATES: ReadonlySet<string> = new Set(["42501", "25006"]);

/**
 * A database error in Neon's format (answered with 400): `{ message, code, severity, detail,
 * hint, position }` always present (null when PostgreSQL gave none), and the other fields
 * PostgreSQL sent. A refused write and a statement timeout get a hint that says why.
 *
 * @example
 * ```ts
 * sqlErrorBody(error.fields, 30_000); // { message: "cannot execute INSERT in a read-only transaction", code: "25006", … }
 * ```
 */
export function sqlErrorBody(
  fields: SqlErrorFields,
  statementTimeoutMs: number,
): Record<string, unknown> {
  let hint = fields.hint ?? null;
  if (hint === null && REFUSED_WRITE_STATES.has(fields.code)) {
    hint =
      "This pool runs every query read-only, as a role that may only read: the database refuses writes.";
  } else if (hint === null && fields.code === "57014") {
    hint = `This pool lets a statement run at most ${statementTimeoutMs} ms (or what is left of its request timeout).`;
  }
  return {
    ...fields,
    severity: fields.severity ?? null,
    detail: fields.detail ?? null,
    hint,
    position: fields.position ?? null,
  };
}
