import type { IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeBindings } from "../../adapters/hono/lock/node-bindings.js";
import { type Listening, listen, POOL_DOMAIN, waitFor } from "../lock-api/harness.js";
import { poolRequest } from "../proxy/client.js";
import { postgresUp, useSqlFixture } from "./sql-fixture.js";

const SECRET_URL = "postgresql://owner:hunter2-secret@db.example.test/prod";

/** What SQL traffic leaves behind: access log, learning, and no caller connection string. */
describe.runIf(postgresUp)("postgres pool: traffic records", () => {
  const f = useSqlFixture("sql_traffic");
  let wrapped: Listening;
  const seenHeaders: string[][] = [];

  beforeAll(async () => {
    // The proxy app as the server mounts it, with a look at the request once it has answered
    // (where a request logger would run).
    wrapped = await listen(async (request, env) => {
      const response = await f.h.proxyApp.fetch(request, env);
      const incoming = nodeBindings(env).incoming as IncomingMessage;
      seenHeaders.push([...incoming.rawHeaders, ...Object.keys(incoming.headers)]);
      return response;
    });
  });
  afterAll(async () => wrapped?.close());

  it("never keeps Neon-Connection-String: stripped before anything logs, not in the access log", async () => {
    const { key } = await f.addDatabasePool("strip");
    const reply = await poolRequest(wrapped.port, {
      host: `strip.${POOL_DOMAIN}`,
      method: "POST",
      path: "/sql",
      headers: { authorization: `Bearer ${key}`, "neon-connection-string": SECRET_URL },
      body: JSON.stringify({ query: "SELECT current_user AS who" }),
    });
    expect(reply.status).toBe(200);
    // It connected as the pool's read role, not as the caller's string says.
    expect(JSON.parse(reply.body).rows).toEqual([{ who: f.db.role }]);
    expect(seenHeaders.at(-1)?.join("\n")).not.toMatch(/neon-connection-string|hunter2/i);
    const entries = await f.h.accessLog.list("strip");
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ outcome: "admitted", source: "proxy", upstreamStatus: 200 });
    expect(JSON.stringify(entries)).not.toContain("hunter2");
    expect(JSON.stringify(f.h.loggedErrors.map(String))).not.toContain("hunter2");
  });

  it("logs refused callers like proxy traffic (rejected when the pool is full)", async () => {
    const { key } = await f.addDatabasePool("full", { maxConcurrent: 1 });
    const slow = f.send("full", key, { query: "SELECT pg_sleep(1)" });
    await waitFor(async () => (await f.h.governor.status("full")).held === 1);
    const refused = await f.send("full", key, { query: "SELECT 1" });
    expect(refused.status).toBe(429);
    expect(refused.headers["x-svc-rejected-by"]).toBe("sluice");
    expect((await slow).status).toBe(200);
    const outcomes = (await f.h.accessLog.list("full")).map((entry) => entry.outcome);
    expect(outcomes.sort()).toEqual(["admitted", "rejected"]);
  });

  it("learns 'too many connections' (53300) like a throttle: 503, then a lower limit", async () => {
    await f.db.admin(`ALTER ROLE ${f.db.role} CONNECTION LIMIT 1`);
    try {
      const { key } = await f.addDatabasePool("crowded", { maxConcurrent: 4, adaptive: true });
      const replies = await Promise.all(
        Array.from({ length: 4 }, () => f.send("crowded", key, { query: "SELECT pg_sleep(0.3)" })),
      );
      const busy = replies.filter((reply) => reply.status === 503);
      expect(busy.length).toBeGreaterThan(0);
      expect(JSON.parse(busy[0]?.body ?? "{}")).toMatchObject({ error: "database_busy" });
      expect(JSON.parse(busy[0]?.body ?? "{}").message).toMatch(/too many connections/);
      expect(busy[0]?.headers["retry-after"]).toBe("1");
      expect((await f.h.governor.status("crowded")).effectiveLimit).toBeLessThan(4);
    } finally {
      await f.db.admin(`ALTER ROLE ${f.db.role} CONNECTION LIMIT -1`);
    }
  });
});
