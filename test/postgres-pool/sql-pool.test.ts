import { describe, expect, it } from "vitest";
import { waitFor } from "../lock-api/harness.js";
import { postgresUp, roleSessions, useSqlFixture } from "./sql-fixture.js";

/** Governed read-only SQL on a postgres pool's host, against the machine's PostgreSQL. */
describe.runIf(postgresUp)("postgres pool: POST /sql", () => {
  const f = useSqlFixture("sql_pool");

  it("answers a read with rows, fields and command; JSON types where JSON is exact", async () => {
    const { key } = await f.addDatabasePool("reads");
    const reply = await f.send("reads", key, {
      query:
        "SELECT id, name, id::int8 AS big, 1.50::numeric AS price, true AS yes, '{\"a\":1}'::jsonb AS doc FROM items WHERE id >= $1 ORDER BY id",
      params: [2],
    });
    expect(reply.status).toBe(200);
    expect(reply.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(reply.body);
    expect(body).toMatchObject({ command: "SELECT", rowCount: 2, rowAsArray: false });
    expect(
      body.fields.map((field: { name: string; dataTypeID: number }) => [
        field.name,
        field.dataTypeID,
      ]),
    ).toEqual([
      ["id", 23],
      ["name", 25],
      ["big", 20],
      ["price", 1700],
      ["yes", 16],
      ["doc", 3802],
    ]);
    expect(body.rows).toEqual([
      { id: 2, name: "two", big: "2", price: "1.50", yes: true, doc: { a: 1 } },
      { id: 3, name: "three", big: "3", price: "1.50", yes: true, doc: { a: 1 } },
    ]);
  });

  it("gives rows as arrays with Neon-Array-Mode, and text values with Neon-Raw-Text-Output", async () => {
    const { key } = await f.addDatabasePool("arrays");
    const reply = await f.send(
      "arrays",
      key,
      { query: "SELECT id, true AS yes FROM items WHERE id = $1", params: ["1"] },
      { headers: { "neon-array-mode": "true", "neon-raw-text-output": "true" } },
    );
    expect(JSON.parse(reply.body)).toMatchObject({ rows: [["1", "t"]], rowAsArray: true });
  });

  it("runs a batch in one read-only transaction and answers each result", async () => {
    const { key } = await f.addDatabasePool("batch");
    const reply = await f.send("batch", key, {
      queries: [
        { query: "SELECT now()::text AS at, current_setting('transaction_read_only') AS ro" },
        { query: "SELECT pg_sleep(0.05), now()::text AS at", params: [] },
      ],
    });
    expect(reply.status).toBe(200);
    const { results } = JSON.parse(reply.body);
    expect(results).toHaveLength(2);
    expect(results[0].rows[0].ro).toBe("on");
    // now() is the transaction's start: equal across the batch only inside one transaction.
    expect(results[1].rows[0].at).toBe(results[0].rows[0].at);
  });

  it.each([
    ["INSERT", "INSERT INTO items VALUES (9, 'nine')"],
    ["UPDATE", "UPDATE items SET name = 'changed'"],
    ["DELETE", "DELETE FROM items"],
    ["DDL", "CREATE TABLE evil (a int)"],
    ["temporary table", "CREATE TEMP TABLE scratch (a int)"],
  ])("has the database refuse a write (%s), in Neon's error shape", async (kind, query) => {
    const subdomain = `write-${kind.replace(/\W/g, "").toLowerCase()}`;
    const { key } = await f.addDatabasePool(subdomain);
    const reply = await f.send(subdomain, key, { query });
    expect(reply.status).toBe(400);
    const body = JSON.parse(reply.body);
    expect(body).toMatchObject({ code: "25006", severity: "ERROR", detail: null, position: null });
    expect(body.message).toMatch(/read-only transaction/);
    expect(body.hint).toMatch(/refuses writes/);
    const rows = await f.db.admin("SELECT name FROM items ORDER BY id");
    expect(rows.rows.map((row) => row.name)).toEqual(["one", "two", "three"]);
  });

  it("cannot turn the read-only transaction off: the role's grants refuse the write anyway", async () => {
    const { key } = await f.addDatabasePool("fence");
    const off = await f.send("fence", key, {
      queries: [
        { query: "SET transaction_read_only = off" },
        { query: "INSERT INTO items VALUES (9, 'x')" },
      ],
    });
    expect(off.status).toBe(400);
    expect(JSON.parse(off.body)).toMatchObject({ code: "25001" });
    // Were the fence down, the grants still are: the role holds SELECT only.
    const granted = await f.db.admin(
      "SELECT has_table_privilege($1, 'items', 'INSERT') AS insert, has_database_privilege($1, current_database(), 'TEMPORARY') AS temp",
      [f.db.role],
    );
    expect(granted.rows[0]).toEqual({ insert: false, temp: false });
  });

  it.each(["COMMIT", "ROLLBACK", "END"])(
    "stops a batch whose statement ends the read-only transaction (%s)",
    async (control) => {
      const subdomain = `control-${control.toLowerCase()}`;
      const { key } = await f.addDatabasePool(subdomain);
      const reply = await f.send(subdomain, key, {
        queries: [
          { query: control },
          { query: "SELECT current_setting('transaction_read_only') AS ro" },
        ],
      });
      expect(reply.status).toBe(400);
      expect(JSON.parse(reply.body)).toMatchObject({ error: "invalid_request" });
      expect(JSON.parse(reply.body).message).toMatch(/ended the transaction/);
    },
  );

  it("refuses several statements in one query (the extended protocol takes one)", async () => {
    const { key } = await f.addDatabasePool("multi");
    const reply = await f.send("multi", key, { query: "SELECT 1; DROP TABLE items" });
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body)).toMatchObject({
      code: "42601",
      message: "cannot insert multiple commands into a prepared statement",
    });
    expect((await f.db.admin("SELECT count(*)::int AS n FROM items")).rows[0].n).toBe(3);
  });

  it("leaves nothing behind on the connection: settings and advisory locks end with the request", async () => {
    await f.db.admin(`ALTER ROLE ${f.db.role} SET default_transaction_read_only = on`);
    // One connection: the second request runs on the first one's connection.
    const { key } = await f.addDatabasePool("session", { maxConcurrent: 1 });
    const set = await f.send("session", key, {
      queries: [
        { query: "SET default_transaction_read_only = off" },
        { query: "SELECT set_config('search_path', 'nowhere', false)" },
        { query: "SELECT pg_advisory_lock(4242)" },
      ],
    });
    expect(set.status).toBe(200);
    const after = await f.send("session", key, {
      query:
        "SELECT current_setting('default_transaction_read_only') AS ro, current_setting('search_path') AS path, pg_backend_pid() AS pid",
    });
    const row = JSON.parse(after.body).rows[0];
    expect(row.ro).toBe("on");
    expect(row.path).toBe('"$user", public');
    const locks = await f.db.admin(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = $1",
      [row.pid],
    );
    expect(locks.rows[0].n).toBe(0);
  });

  it("cancels a statement past the pool's statement timeout, and says so", async () => {
    const { key } = await f.addDatabasePool("slow", {}, { statementTimeoutMs: 200 });
    const started = Date.now();
    const reply = await f.send("slow", key, { query: "SELECT pg_sleep(5)" });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(reply.status).toBe(400);
    const body = JSON.parse(reply.body);
    expect(body).toMatchObject({
      code: "57014",
      message: "canceling statement due to statement timeout",
    });
    expect(body.hint).toMatch(/at most 200 ms/);
  });

  it("caps the result at the pool's rows and bytes: 413, the query cancelled, the connection fine", async () => {
    const { key } = await f.addDatabasePool(
      "capped",
      { maxConcurrent: 1 },
      { maxRows: 5, maxResultBytes: 1_000 },
    );
    const rows = await f.send("capped", key, { query: "SELECT generate_series(1, 1000000)" });
    expect(rows.status).toBe(413);
    expect(rows.headers["x-svc-rejected-by"]).toBe("sluice");
    expect(JSON.parse(rows.body)).toMatchObject({ error: "result_too_large" });
    expect(JSON.parse(rows.body).message).toMatch(/more than 5 rows/);
    const bytes = await f.send("capped", key, {
      query: "SELECT repeat('x', 600) FROM generate_series(1, 2)",
    });
    expect(bytes.status).toBe(413);
    expect(JSON.parse(bytes.body).message).toMatch(/larger than 1000 bytes/);
    const fine = await f.send("capped", key, { query: "SELECT 1 AS one" });
    expect(JSON.parse(fine.body).rows).toEqual([{ one: 1 }]);
  });

  it("answers 404 for another path and 405 for another method, with a message", async () => {
    const { key } = await f.addDatabasePool("paths");
    const path = await f.send("paths", key, {}, { path: "/v1/query" });
    expect(path.status).toBe(404);
    expect(JSON.parse(path.body)).toMatchObject({ error: "not_found" });
    expect(JSON.parse(path.body).message).toMatch(/POST \/sql only/);
    const method = await f.send("paths", key, "", { method: "GET" });
    expect(method.status).toBe(405);
    expect(method.headers.allow).toBe("POST");
    expect(JSON.parse(method.body).message).toMatch(/GET is not allowed/);
  });

  it("keeps the proxy's refusals: no key 401, bad body and parameter types 400", async () => {
    const { key } = await f.addDatabasePool("refusals");
    const anonymous = await f.send("refusals", null, { query: "SELECT 1" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["x-svc-rejected-by"]).toBe("sluice");
    const object = await f.send("refusals", key, { query: "SELECT $1", params: [{ a: 1 }] });
    expect(object.status).toBe(400);
    expect(JSON.parse(object.body)).toMatchObject({ error: "invalid_request" });
    expect(JSON.parse(object.body).message).toMatch(/^params\.0: A parameter must be a string/);
    const garbage = await f.send("refusals", key, "not json");
    expect(JSON.parse(garbage.body)).toMatchObject({ error: "invalid_request" });
    const nested = await f.send("refusals", key, {
      query: "SELECT $1::int[] AS list, $2::bool AS flag",
      params: [[1, 2, null], false],
    });
    expect(JSON.parse(nested.body).rows).toEqual([{ list: "{1,2,NULL}", flag: false }]);
  });

  it("answers 502 with a message when the database is down, and frees the slot", async () => {
    const { key } = await f.addDatabasePool(
      "down",
      { maxConcurrent: 1 },
      { url: "postgres://reader:pw@127.0.0.1:1/db" },
    );
    for (let i = 0; i < 3; i++) {
      const reply = await f.send(
        "down",
        key,
        { query: "SELECT 1" },
        { headers: { "x-svc-no-queue": "1" } },
      );
      expect(reply.status).toBe(502);
      expect(JSON.parse(reply.body)).toEqual({
        error: "bad_gateway",
        message: "The pool's database could not be reached.",
      });
    }
  });
  it("refuses a body over the cap with 413, before a slot is taken", async () => {
    const { key } = await f.addDatabasePool("big-body");
    const reply = await f.send("big-body", key, {
      query: "SELECT $1::text",
      params: ["x".repeat(1024 * 1024)],
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "payload_too_large" });
    expect(await f.h.accessLog.list("big-body")).toEqual([]);
  });

  it("runs a batch at the isolation level Neon-Batch-Isolation-Level asks for, still read-only", async () => {
    const { key } = await f.addDatabasePool("isolation");
    const reply = await f.send(
      "isolation",
      key,
      { queries: [{ query: "SELECT current_setting('transaction_isolation') AS level" }] },
      {
        headers: { "neon-batch-isolation-level": "Serializable", "neon-batch-read-only": "false" },
      },
    );
    expect(JSON.parse(reply.body).results[0].rows).toEqual([{ level: "serializable" }]);
    const bad = await f.send(
      "isolation",
      key,
      { queries: [{ query: "SELECT 1" }] },
      { headers: { "neon-batch-isolation-level": "Chaos" } },
    );
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ error: "invalid_request" });
  });

  it("cancels at the pool's request timeout even when a batch lifts its statement timeout: 504", async () => {
    const { key } = await f.addDatabasePool("deadline", { requestTimeoutMs: 400 });
    const started = Date.now();
    const reply = await f.send("deadline", key, {
      queries: [{ query: "SET statement_timeout = 0" }, { query: "SELECT pg_sleep(10)" }],
    });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(reply.status).toBe(504);
    expect(reply.headers["x-svc-rejected-by"]).toBe("sluice");
    expect(JSON.parse(reply.body)).toMatchObject({ error: "upstream_timeout" });
    await waitFor(async () => (await roleSessions(f.db)).sleeping === 0, 3_000);
  });
});
