import { describe, expect, it } from "vitest";
import { postgresUp, useSqlFixture } from "./sql-fixture.js";

const invalid = (reply: { status: number; body: string; headers: Record<string, unknown> }) => {
  expect(reply.status).toBe(400);
  expect(reply.headers["x-svc-rejected-by"]).toBe("sluice");
  const body = JSON.parse(reply.body);
  expect(body.error).toBe("invalid_request");
  return body.message as string;
};

/** Findings of a black-box review of POST /sql: each refused clearly, or capped as documented. */
describe.runIf(postgresUp)("postgres pool: /sql limits and strictness", () => {
  const f = useSqlFixture("sql_hardening", { corsOrigins: ["https://app.example"] });

  it("refuses parameters nested deeper than PostgreSQL's 6 array dimensions with 400, at any depth", async () => {
    const { key } = await f.addDatabasePool("deep");
    for (const depth of [7, 1_000, 100_000]) {
      const param = `${"[".repeat(depth)}1${"]".repeat(depth)}`;
      const reply = await f.send("deep", key, `{"query":"SELECT $1::int[]","params":[${param}]}`);
      expect(invalid(reply)).toMatch(/^params\.0: .*at most 6 deep/);
    }
    const six = await f.send("deep", key, {
      query: "SELECT $1::int[] AS a",
      params: [[[[[[[1]]]]]]],
    });
    expect(JSON.parse(six.body).rows).toEqual([{ a: "{{{{{{1}}}}}}" }]);
  });

  it("caps what is serialized: column names and nulls of every row count against maxResultBytes", async () => {
    const { key } = await f.addDatabasePool("wide", {}, { maxRows: 10_000 });
    // 2,000 rows × 200 NULL columns named with 62 characters: ~28 MB of JSON objects, no value text.
    const columns = Array.from(
      { length: 200 },
      (_, i) => `NULL::text AS "${String(i).padStart(3, "0")}${"c".repeat(59)}"`,
    ).join(", ");
    const query = `SELECT ${columns} FROM generate_series(1, 2000)`;
    const reply = await f.send("wide", key, { query });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body).message).toMatch(/larger than 10485760 bytes/);
    // As arrays the same rows take ~2 MB: under the cap, and the answer is within it.
    const arrays = await f.send("wide", key, { query }, { headers: { "neon-array-mode": "true" } });
    expect(arrays.status).toBe(200);
    expect(Buffer.byteLength(arrays.body)).toBeLessThan(10 * 1024 * 1024);
  });

  it("caps a small answer at its serialized size, not its values' text", async () => {
    const { key } = await f.addDatabasePool("small", {}, { maxResultBytes: 2_000 });
    // 200 rows of one NULL: no value text at all, 2.2 KB of {"n":null} plus the fields.
    const over = await f.send("small", key, {
      query: "SELECT NULL::text AS n FROM generate_series(1, 200)",
    });
    expect(over.status).toBe(413);
    const under = await f.send("small", key, {
      query: "SELECT NULL::text AS n FROM generate_series(1, 10)",
    });
    expect(under.status).toBe(200);
    expect(Buffer.byteLength(under.body)).toBeLessThan(2_000);
  });

  it("holds the statement timeout even when a batch switches it off", async () => {
    const { key } = await f.addDatabasePool("untimed", {}, { statementTimeoutMs: 300 });
    for (const off of [
      "SET LOCAL statement_timeout = 0",
      "SELECT set_config('statement_timeout', '0', true)",
    ]) {
      const started = Date.now();
      const reply = await f.send("untimed", key, {
        queries: [{ query: off }, { query: "SELECT pg_sleep(5)" }],
      });
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(reply.status).toBe(400);
      const body = JSON.parse(reply.body);
      expect(body).toMatchObject({ code: "57014" });
      expect(body.hint).toMatch(/at most 300 ms/);
    }
    // The connection was handed back fine.
    const after = await f.send("untimed", key, { query: "SELECT 1 AS one" });
    expect(JSON.parse(after.body).rows).toEqual([{ one: 1 }]);
  });

  it("refuses more than 65,535 parameters and a NUL in the query, naming the problem", async () => {
    const { key } = await f.addDatabasePool("protocol");
    const many = await f.send("protocol", key, {
      query: "SELECT 1",
      params: new Array(70_000).fill(1),
    });
    expect(invalid(many)).toMatch(/^params: Must hold at most 65535 parameters/);
    const nul = await f.send("protocol", key, { query: "SELECT 1\u0000" });
    expect(invalid(nul)).toMatch(/^query: Must not contain a NUL character/);
  });

  it("refuses query and queries together, unknown fields, and flags that are not true or false", async () => {
    const { key } = await f.addDatabasePool("strict");
    const both = await f.send("strict", key, {
      query: "SELECT 1",
      queries: [{ query: "SELECT 2" }],
    });
    expect(invalid(both)).toMatch(/^query: .*not both/);
    const unknown = await f.send("strict", key, { query: "SELECT 1", parms: [1] });
    expect(invalid(unknown)).toMatch(/^parms: Unknown field/);
    const inBatch = await f.send("strict", key, { queries: [{ query: "SELECT 1", mode: "x" }] });
    expect(invalid(inBatch)).toMatch(/^queries\.0\.mode: Unknown field/);
    for (const header of ["neon-array-mode", "neon-raw-text-output", "neon-batch-deferrable"]) {
      const maybe = await f.send(
        "strict",
        key,
        { query: "SELECT 1" },
        { headers: { [header]: "maybe" } },
      );
      expect(invalid(maybe)).toMatch(/must be true or false/);
    }
    const fine = await f.send(
      "strict",
      key,
      { query: "SELECT 1 AS one" },
      { headers: { "neon-array-mode": "false" } },
    );
    expect(JSON.parse(fine.body).rows).toEqual([{ one: 1 }]);
  });

  it("reports why the database cannot be reached to the server's log, without the password", async () => {
    const { key } = await f.addDatabasePool(
      "unreachable",
      {},
      { url: "postgres://reader:s3cret-pw@127.0.0.1:1/db" },
    );
    const reply = await f.send("unreachable", key, { query: "SELECT 1" });
    expect(reply.status).toBe(502);
    const failure = f.h.originFailures.at(-1);
    expect(failure?.message).toBe("The pool's database could not be reached.");
    expect(String((failure?.cause as Error | undefined)?.message)).toMatch(
      /ECONNREFUSED 127\.0\.0\.1:1/,
    );
    expect(reply.body).not.toMatch(/ECONNREFUSED|s3cret/);
  });

  it("refuses cross-site browser posts: a foreign Origin 403, a browser's text/plain 415", async () => {
    const { key } = await f.addDatabasePool("open", { requireKey: false });
    void key;
    const evil = await f.send(
      "open",
      null,
      { query: "SELECT 1" },
      { headers: { origin: "https://evil.example", "content-type": "text/plain" } },
    );
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body)).toMatchObject({ error: "unauthorized" });
    const listedPlain = await f.send(
      "open",
      null,
      { query: "SELECT 1" },
      { headers: { origin: "https://app.example", "content-type": "text/plain" } },
    );
    expect(listedPlain.status).toBe(415);
    const listed = await f.send(
      "open",
      null,
      { query: "SELECT 1 AS one" },
      { headers: { origin: "https://app.example", "content-type": "application/json" } },
    );
    expect(listed.status).toBe(200);
    expect(listed.headers["access-control-allow-origin"]).toBe("https://app.example");
    // The Neon driver outside a browser: no Origin, text/plain.
    const driver = await f.send(
      "open",
      null,
      { query: "SELECT 1 AS one" },
      { headers: { "content-type": "text/plain;charset=UTF-8" } },
    );
    expect(JSON.parse(driver.body).rows).toEqual([{ one: 1 }]);
  });

  it("answers a page's CORS preflight for /sql before any key: the listed origin with the Neon headers, a foreign one 403", async () => {
    const { key } = await f.addDatabasePool("browser");
    const preflight = (origin: string, path = "/sql") =>
      f.send("browser", null, "", {
        method: "OPTIONS",
        path,
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type, neon-connection-string",
        },
      });
    const listed = await preflight("https://app.example");
    expect(listed.status).toBe(204);
    expect(listed.headers["access-control-allow-origin"]).toBe("https://app.example");
    expect(listed.headers["access-control-allow-methods"]).toBe("POST");
    const allowed = String(listed.headers["access-control-allow-headers"]).split(", ");
    for (const name of [
      "authorization",
      "content-type",
      "neon-connection-string",
      "neon-array-mode",
    ]) {
      expect(allowed).toContain(name);
    }
    const foreign = await preflight("https://evil.example");
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).message).toMatch(/may not call this database pool/);
    // Not a preflight of /sql, or not a database pool: the usual way (no key: 401).
    expect((await preflight("https://app.example", "/other")).status).toBe(401);
    await f.h.addPool({ subdomain: "web", requireKey: true });
    for (const pool of ["web", "nowhere"]) {
      const answer = await f.send(pool, null, "", {
        method: "OPTIONS",
        headers: { origin: "https://app.example", "access-control-request-method": "POST" },
      });
      expect(answer.status, pool).toBe(401);
    }
    // The request the preflight cleared.
    const query = await f.send(
      "browser",
      key,
      { query: "SELECT 2 AS two" },
      {
        headers: { origin: "https://app.example", "content-type": "application/json" },
      },
    );
    expect(JSON.parse(query.body).rows).toEqual([{ two: 2 }]);
    expect(query.headers["access-control-allow-origin"]).toBe("https://app.example");
  });
});
