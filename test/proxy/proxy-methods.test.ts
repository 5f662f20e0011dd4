import { describe, expect, it } from "vitest";
import { poolRequest } from "./client.js";
import { HOST, useForwardingFixture } from "./forwarding-fixture.js";

describe("pool proxy: Via, TRACE and Max-Forwards (RFC 9110 7.6)", () => {
  const fixture = useForwardingFixture();
  const requestsCounted = () =>
    fixture.h.governor.metrics.totals("llm", 0, Number.MAX_SAFE_INTEGER).requests;

  it("names itself in Via on responses too, after the origin's own Via", async () => {
    const plain = await fixture.send({ host: HOST, path: "/plain" });
    expect(plain.headers.via).toBe("1.1 sluice");
    fixture.upstream.on("/base/cached", (_request, response) => {
      response.setHeader("via", "1.1 origin-cache");
      response.end("ok");
    });
    const cached = await fixture.send({ host: HOST, path: "/cached" });
    expect(cached.headers.via).toBe("1.1 origin-cache, 1.1 sluice");
  });

  it("refuses TRACE with 405 before the origin or a slot: the echo would carry the managed credential", async () => {
    const reply = await fixture.send({ host: HOST, method: "TRACE", path: "/v1/anything" });
    expect(reply.status).toBe(405);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "method_not_allowed" });
    expect(reply.headers.allow).toContain("OPTIONS");
    expect(reply.headers.allow).not.toContain("TRACE");
    expect(reply.headers["x-svc-rejected-by"]).toBe("sluice");
    expect(reply.body).not.toContain("sk-upstream-secret");
    expect(fixture.upstream.hits).toBe(0);
    expect(requestsCounted()).toBe(0);
  });

  it("refuses TRACE asked through a method-override header too", async () => {
    const reply = await fixture.send({
      host: HOST,
      method: "POST",
      path: "/v1/anything",
      headers: { "x-http-method-override": "trace" },
    });
    expect(reply.status).toBe(405);
    expect(JSON.parse(reply.body).message).toMatch(/^TRACE is not proxied/);
    expect(fixture.upstream.hits).toBe(0);
  });

  it("refuses TRACE with 405 for a read-only key too (it is no write, it is never proxied)", async () => {
    const readKey = (await fixture.h.mintKey("llm", { access: "read" })).plaintext;
    const reply = await poolRequest(fixture.h.proxy.port, {
      host: HOST,
      method: "TRACE",
      headers: { "x-svc-key": readKey },
    });
    expect(reply.status).toBe(405);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "method_not_allowed" });
  });

  it("still checks the caller first: TRACE without a key is 401", async () => {
    const reply = await poolRequest(fixture.h.proxy.port, { host: HOST, method: "TRACE" });
    expect(reply.status).toBe(401);
  });

  it("answers OPTIONS with Max-Forwards: 0 itself, without the origin or a slot", async () => {
    const reply = await fixture.send({
      host: HOST,
      method: "OPTIONS",
      headers: { "max-forwards": "0" },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers.allow).toContain("GET");
    // Sluice's own answer, marked as such, with an empty body.
    expect(reply.headers["x-svc-rejected-by"]).toBe("sluice");
    expect(reply.headers["content-length"]).toBe("0");
    expect(reply.body).toBe("");
    expect(fixture.upstream.hits).toBe(0);
    expect(requestsCounted()).toBe(0);
  });

  it("decrements Max-Forwards on OPTIONS and leaves it alone on other methods", async () => {
    await fixture.send({ host: HOST, method: "OPTIONS", headers: { "max-forwards": "3" } });
    expect(fixture.upstream.seen.at(-1)?.headers["max-forwards"]).toBe("2");
    await fixture.send({ host: HOST, method: "GET", headers: { "max-forwards": "0" } });
    expect(fixture.upstream.seen.at(-1)?.headers["max-forwards"]).toBe("0");
    // Not a number: passed through untouched rather than guessed at.
    await fixture.send({ host: HOST, method: "OPTIONS", headers: { "max-forwards": "many" } });
    expect(fixture.upstream.seen.at(-1)?.headers["max-forwards"]).toBe("many");
    expect(fixture.upstream.hits).toBe(3);
  });
});
