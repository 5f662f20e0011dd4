import {
  type NeonDbError,
  type NeonQueryFunction,
  neon,
  neonConfig,
} from "@neondatabase/serverless";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POOL_DOMAIN } from "../lock-api/harness.js";
import { postgresUp, useSqlFixture } from "./sql-fixture.js";

/**
 * The stock Neon serverless driver (1.2.0), unchanged, talking to a postgres pool: its fetch
 * endpoint is the pool host and its auth token the pool key. The connection string it is
 * given is nonsense to the database on purpose: Sluice never reads it.
 */
describe.runIf(postgresUp)("postgres pool: the Neon serverless driver end to end", () => {
  const f = useSqlFixture("neon_client");
  let sql: NeonQueryFunction<false, false>;
  let agent: Agent;

  beforeAll(async () => {
    const { key } = await f.addDatabasePool("neon");
    // The pool host resolves to the test server (the proxy routes by Host).
    agent = new Agent({
      connect: {
        lookup: (_host, options, callback) => {
          if ((options as { all?: boolean }).all)
            callback(null, [{ address: "127.0.0.1", family: 4 }]);
          else (callback as (e: null, a: string, f: number) => void)(null, "127.0.0.1", 4);
        },
      },
    });
    neonConfig.fetchEndpoint = `http://neon.${POOL_DOMAIN}:${f.h.proxy.port}/sql`;
    neonConfig.fetchFunction = (url: string, init: RequestInit) =>
      undiciFetch(url, { ...(init as object), dispatcher: agent });
    sql = neon("postgresql://someone:hunter2-not-used@neon.pools.test/elsewhere", {
      authToken: key,
      disableWarningInBrowsers: true,
    });
  });
  afterAll(async () => {
    await agent?.close();
  });

  it("runs tagged-template and parameterised queries, types parsed by the driver", async () => {
    const rows =
      await sql`SELECT id, name, id::int8 AS big, now() AS at FROM items WHERE id <= ${2} ORDER BY id`;
    expect(rows.map((row) => [row.id, row.name, row.big])).toEqual([
      [1, "one", "1"],
      [2, "two", "2"],
    ]);
    expect(rows[0]?.at).toBeInstanceOf(Date);
    const full = await sql.query("SELECT $1::text AS word", ["hello"], { fullResults: true });
    expect(full).toMatchObject({ command: "SELECT", rowCount: 1, rows: [{ word: "hello" }] });
    expect(full.fields[0]).toMatchObject({ name: "word", dataTypeID: 25 });
  });

  it("runs a transaction (a batch) and answers each result", async () => {
    const [first, second] = await sql.transaction([
      sql`SELECT count(*)::int AS n FROM items`,
      sql`SELECT current_setting('transaction_read_only') AS ro`,
    ]);
    expect(first).toEqual([{ n: 3 }]);
    expect(second).toEqual([{ ro: "on" }]);
  });

  it("raises the database's refusal of a write as a NeonDbError with its SQLSTATE", async () => {
    const error = (await sql`INSERT INTO items VALUES (10, 'ten')`.catch((e) => e)) as NeonDbError;
    expect(error.name).toBe("NeonDbError");
    expect(error.code).toBe("25006");
    expect(error.message).toBe("cannot execute INSERT in a read-only transaction");
    expect(error.hint).toMatch(/refuses writes/);
  });

  it("shows Sluice's own refusals as server errors", async () => {
    const anonymous = neon("postgresql://x:y@neon.pools.test/db", {
      disableWarningInBrowsers: true,
    });
    await expect(anonymous`SELECT 1`).rejects.toThrow(/HTTP status 401.*pool key is required/);
  });
});
