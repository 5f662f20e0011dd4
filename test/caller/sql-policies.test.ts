import { describe, expect, it } from "vitest";
import { signLockRequest } from "../../src/policies/request-signing.js";
import { postgresUp, useSqlFixture } from "../postgres-pool/sql-fixture.js";

/** Caller policies on a postgres pool's POST /sql, with a real database. */
describe.runIf(postgresUp)("caller policies on POST /sql", () => {
  const fixture = useSqlFixture("caller_policies_sql");
  const query = JSON.stringify({ query: "SELECT count(*)::int AS n FROM items" });

  it("checks the signature over the SQL body before a slot, and runs the signed query", async () => {
    await fixture.addDatabasePool("signed", { callerPolicies: { hmac: { skewSeconds: 300 } } });
    const minted = await fixture.h.mintKey("signed");
    const sign = (body: string) =>
      signLockRequest({
        secret: minted.requestSecret as string,
        keyId: minted.key.id,
        method: "POST",
        url: "/sql",
        body,
      });
    const unsigned = await fixture.send("signed", minted.plaintext, query);
    expect(unsigned.status).toBe(401);
    const tampered = await fixture.send("signed", minted.plaintext, query, {
      headers: sign(JSON.stringify({ query: "SELECT 1" })),
    });
    expect(tampered.status).toBe(401);
    const reply = await fixture.send("signed", minted.plaintext, query, { headers: sign(query) });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).rows).toEqual([{ n: 3 }]);
    const outcomes = (await fixture.h.accessLog.list("signed")).map((entry) => entry.outcome);
    expect(outcomes.sort()).toEqual(["admitted", "refused", "refused"]);
  });

  it("refuses a caller outside the IP allowlist with 403", async () => {
    const { key } = await fixture.addDatabasePool("walled", {
      callerPolicies: { ipAllowlist: ["10.0.0.0/8"] },
    });
    const reply = await fixture.send("walled", key, query);
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "unauthorized" });
    expect(fixture.h.governor.metrics.totals("walled", 0, Number.MAX_SAFE_INTEGER).requests).toBe(
      0,
    );
  });
});
