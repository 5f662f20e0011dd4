import { describe, expect, it } from "vitest";
import { parseSqlBody, sqlOptions } from "../../adapters/hono/sql/sql-request.js";
import { sqlErrorBody, sqlResultBody } from "../../adapters/hono/sql/sql-response.js";
import { beginSql } from "../../adapters/postgres-pool/batch-session.js";
import type { SqlField } from "../../adapters/postgres-pool/types.js";
import { connectionStringIssue, databaseOrigin } from "../../src/catalog/pool-database.js";
import { InvalidArgumentError } from "../../src/errors.js";

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const headers = (record: Record<string, string>) => new Headers(record);
const field = (name: string, dataTypeID: number): SqlField => ({
  name,
  dataTypeID,
  tableID: 0,
  columnID: 0,
  dataTypeSize: -1,
  dataTypeModifier: -1,
  format: "text",
});

/** The Neon HTTP format's pieces that need no database. */
describe("SQL wire format", () => {
  it("reads one statement or a batch; params default to none", () => {
    expect(parseSqlBody(bytes({ query: "SELECT 1" }))).toEqual({
      batch: false,
      statements: [{ query: "SELECT 1", params: [] }],
    });
    expect(parseSqlBody(bytes({ queries: [{ query: "SELECT $1", params: ["a"] }] }))).toEqual({
      batch: true,
      statements: [{ query: "SELECT $1", params: ["a"] }],
    });
  });

  it("names what is wrong with a body, and where", () => {
    const message = (value: unknown) => {
      try {
        parseSqlBody(bytes(value));
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidArgumentError);
        return (error as Error).message;
      }
      return "accepted";
    };
    expect(message({ query: "" })).toBe("query: Must not be empty.");
    expect(message({ query: "SELECT $1", params: [[1, { a: 1 }]] })).toMatch(/^params\.0: /);
    expect(message({ queries: [] })).toBe("queries: Must hold at least one statement.");
    expect(message({ queries: [{ query: "x" }, { sql: "y" }] })).toBe("queries.1.query: Required.");
    expect(message("SELECT 1")).toBe('Must be { "query": "...", "params": [...] }.');
    expect(message({ sql: "SELECT 1" })).toBe("query: Required.");
  });

  it("reads Neon's headers; an unknown isolation level is refused", () => {
    expect(
      sqlOptions(
        headers({
          "neon-array-mode": "true",
          "neon-raw-text-output": "TRUE",
          "neon-batch-isolation-level": "RepeatableRead",
          "neon-batch-deferrable": "true",
        }),
      ),
    ).toEqual({ arrayMode: true, rawText: true, isolation: "repeatable read", deferrable: true });
    expect(sqlOptions(headers({}))).toEqual({
      arrayMode: false,
      rawText: false,
      isolation: undefined,
      deferrable: false,
    });
    expect(() => sqlOptions(headers({ "neon-batch-isolation-level": "x" }))).toThrow(
      InvalidArgumentError,
    );
  });

  it("gives JSON values only where JSON is exact, text elsewhere", () => {
    const result = {
      command: "SELECT",
      rowCount: 1,
      fields: [
        field("f", 701),
        field("nan", 701),
        field("n", 1700),
        field("j", 114),
        field("b", 16),
        field("a", 1007),
      ],
      rows: [["1.5", "NaN", "12345678901234567890.5", '[1,"x"]', "f", "{1,2}"]],
    };
    const options = { arrayMode: true, rawText: false, isolation: undefined, deferrable: false };
    expect(sqlResultBody(result, options).rows).toEqual([
      [1.5, "NaN", "12345678901234567890.5", [1, "x"], false, "{1,2}"],
    ]);
    expect(sqlResultBody(result, { ...options, rawText: true }).rows).toEqual(result.rows);
  });

  it("fills Neon's error fields and says why a write or a timeout was refused", () => {
    const base = {
      message: "m",
      severity: "ERROR",
      detail: undefined,
      hint: undefined,
      position: "8",
      where: undefined,
      schema: undefined,
      table: undefined,
      column: undefined,
      dataType: undefined,
      constraint: undefined,
    };
    expect(sqlErrorBody({ ...base, code: "42601" }, 1000)).toMatchObject({
      code: "42601",
      detail: null,
      hint: null,
      position: "8",
    });
    expect(sqlErrorBody({ ...base, code: "42501" }, 1000).hint).toMatch(/refuses writes/);
    expect(sqlErrorBody({ ...base, code: "57014" }, 1000).hint).toMatch(/at most 1000 ms/);
  });

  it("opens every transaction read-only with a local timeout and a first snapshot", () => {
    const batch = { statements: [], statementTimeoutMs: 1500.7, maxRows: 1, maxResultBytes: 1 };
    expect(beginSql(batch)).toBe(
      "BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = 1500; SELECT 1",
    );
    expect(beginSql({ ...batch, isolation: "serializable", deferrable: true })).toBe(
      "BEGIN TRANSACTION ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE; SET LOCAL statement_timeout = 1500; SELECT 1",
    );
  });

  it("checks a read role's connection string and shows it without user or password", () => {
    expect(connectionStringIssue("postgres://reader:pw@db:5432/app")).toBeNull();
    expect(connectionStringIssue("postgresql://reader@db/app?sslmode=require")).toBeNull();
    expect(connectionStringIssue("mysql://reader:pw@db/app")).toMatch(/postgres:\/\//);
    expect(connectionStringIssue("postgres://db/app")).toMatch(/user/);
    expect(connectionStringIssue("postgres://reader:pw@db")).toMatch(/database/);
    expect(databaseOrigin("postgres://reader:pw@db.internal:6432/app?sslmode=require")).toBe(
      "postgresql://db.internal:6432/app",
    );
  });
});
