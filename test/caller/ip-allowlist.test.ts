import { afterEach, describe, expect, it } from "vitest";
import { REFUSED_BY_POLICY_HEADER } from "../../adapters/hono/lock/lock-responses.js";
import { createHarness, type Harness, listen, POOL_DOMAIN, readBody } from "../lock-api/harness.js";
import { poolRequest } from "../proxy/client.js";
import { TestUpstream } from "../proxy/upstream.js";

/** A pool's ipAllowlist on the Lock API and the proxy, over real sockets. */
describe("IP allowlist policy", () => {
  let h: Harness;
  let upstream: TestUpstream;
  let key: string;

  async function setUp(ipAllowlist: string[], trustedProxies?: string[]) {
    upstream = await new TestUpstream().start();
    h = await createHarness(trustedProxies ? { trustedProxies } : {});
    await h.addPool({
      subdomain: "llm",
      origin: upstream.url,
      maxConcurrent: 4,
      callerPolicies: { ipAllowlist },
    });
    key = (await h.mintKey("llm")).plaintext;
  }
  afterEach(async () => {
    await h.close();
    await upstream.stop();
  });

  const acquire = (headers: Record<string, string> = {}) =>
    h.lockPost("/pools/llm/lock/acquire", { key, headers });
  const proxied = (headers: Record<string, string> = {}) =>
    poolRequest(h.proxy.port, {
      host: `llm.${POOL_DOMAIN}`,
      path: "/v1/models",
      headers: { "x-svc-key": key, ...headers },
    });
  const held = async () => (await h.governor.status("llm")).held;

  it("admits a caller inside the list on the Lock API and the proxy", async () => {
    await setUp(["127.0.0.0/8"]);
    const response = await acquire();
    expect(response.status).toBe(200);
    expect((await readBody(response)).slotId).toEqual(expect.any(String));
    expect((await proxied()).status).toBe(200);
    expect(upstream.hits).toBe(1);
  });

  it("refuses a caller outside the list with 403 unauthorized, before a slot or the origin", async () => {
    await setUp(["10.0.0.0/8", "2001:db8::/32"]);
    const response = await acquire();
    expect(response.status).toBe(403);
    expect(response.headers.get(REFUSED_BY_POLICY_HEADER)).toBe("ip_allowlist");
    expect(await readBody(response)).toMatchObject({ error: "unauthorized" });
    const reply = await proxied();
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "unauthorized" });
    expect(upstream.hits).toBe(0);
    expect(await held()).toBe(0);
    expect(h.governor.metrics.totals("llm", 0, Number.MAX_SAFE_INTEGER).requests).toBe(0);
    // The access log says which policy refused, for each door.
    const entries = await h.accessLog.list("llm");
    expect(entries.map((e) => [e.outcome, e.reason, e.source]).sort()).toEqual([
      ["refused", "ip_allowlist", "lock"],
      ["refused", "ip_allowlist", "proxy"],
    ]);
  });

  it("checks the key first: a caller without a key gets the key's 401, not the policy's 403", async () => {
    await setUp(["10.0.0.0/8"]);
    const response = await h.lockPost("/pools/llm/lock/acquire");
    expect(response.status).toBe(401);
    expect(response.headers.get(REFUSED_BY_POLICY_HEADER)).toBeNull();
  });

  it("ignores X-Forwarded-For from a peer that is no trusted proxy (spoofing)", async () => {
    await setUp(["203.0.113.0/24"]);
    expect((await acquire({ "x-forwarded-for": "203.0.113.7" })).status).toBe(403);
    expect((await proxied({ "x-forwarded-for": "203.0.113.7" })).status).toBe(403);
    expect(upstream.hits).toBe(0);
  });

  it("believes a trusted proxy's hop, read from the right", async () => {
    await setUp(["203.0.113.0/24"], ["127.0.0.1/32"]);
    expect((await acquire({ "x-forwarded-for": "203.0.113.7" })).status).toBe(200);
    expect((await proxied({ "x-forwarded-for": "198.51.100.1, 203.0.113.7" })).status).toBe(200);
    // The caller wrote the allowed address itself; the trusted proxy appended its real one.
    expect((await acquire({ "x-forwarded-for": "203.0.113.7, 198.51.100.1" })).status).toBe(403);
    expect((await proxied({ "x-forwarded-for": "203.0.113.7, 198.51.100.1" })).status).toBe(403);
    expect(upstream.hits).toBe(1);
  });

  it("reads a trusted proxy's hop written with a port as its address, not as the proxy itself", async () => {
    // The allowlist holds the proxy's own address: a hop misread as "no address" would stop
    // at the proxy, and every client behind it would pass as the proxy.
    await setUp(["127.0.0.1/32", "203.0.113.0/24", "2001:db8::/32"], ["127.0.0.1/32"]);
    expect((await acquire({ "x-forwarded-for": "198.51.100.1:5555" })).status).toBe(403);
    expect((await proxied({ "x-forwarded-for": "[2001:db9::1]:443" })).status).toBe(403);
    expect((await acquire({ "x-forwarded-for": "203.0.113.7:5555" })).status).toBe(200);
    expect((await proxied({ "x-forwarded-for": "[2001:db8::7]:443" })).status).toBe(200);
    expect(upstream.hits).toBe(1);
  });

  it("logs the address the trusted proxy forwarded, the one the allowlist judged, not the proxy's", async () => {
    await setUp(["203.0.113.0/24"], ["127.0.0.1/32"]);
    expect((await acquire({ "x-forwarded-for": "203.0.113.7" })).status).toBe(200);
    expect((await proxied({ "x-forwarded-for": "203.0.113.8" })).status).toBe(200);
    expect((await acquire({ "x-forwarded-for": "198.51.100.1" })).status).toBe(403);
    expect((await proxied({ "x-forwarded-for": "198.51.100.2" })).status).toBe(403);
    const entries = await h.accessLog.list("llm");
    expect(entries.map((e) => [e.source, e.outcome, e.remoteAddress]).sort()).toEqual([
      ["lock", "admitted", "203.0.113.7"],
      ["lock", "refused", "198.51.100.1"],
      ["proxy", "admitted", "203.0.113.8"],
      ["proxy", "refused", "198.51.100.2"],
    ]);
    // The origin still hears of every hop: the caller's, then Sluice's own peer.
    expect(upstream.seen[0]?.headers["x-forwarded-for"]).toBe("203.0.113.8, 127.0.0.1");
  });

  it("does not check renew and release: the slot id and key suffice", async () => {
    await setUp(["203.0.113.0/24"], ["127.0.0.1/32"]);
    const { slotId } = await readBody(await acquire({ "x-forwarded-for": "203.0.113.7" }));
    expect((await h.lockPost(`/pools/llm/lock/${slotId}/renew`, { key })).status).toBe(200);
    const release = await h.lockPost(`/pools/llm/lock/${slotId}/release`, { key });
    expect(await readBody(release)).toEqual({ released: true });
  });

  it("matches IPv6 peers, and a dual-stack socket's IPv4-mapped peers against IPv4 ranges", async () => {
    await setUp(["::1/128"]);
    const dual = await listen(h.lockApp.fetch, "::");
    try {
      const post = (host: string) =>
        fetch(`http://${host}:${dual.port}/pools/llm/lock/acquire`, {
          method: "POST",
          headers: { "x-svc-key": key },
        });
      expect((await post("[::1]")).status).toBe(200);
      // 127.0.0.1 reaches the dual-stack socket as ::ffff:127.0.0.1: not ::1.
      expect((await post("127.0.0.1")).status).toBe(403);
      await h.addPool({
        subdomain: "llm",
        origin: upstream.url,
        maxConcurrent: 4,
        callerPolicies: { ipAllowlist: ["127.0.0.0/8"] },
      });
      expect((await post("127.0.0.1")).status).toBe(200);
      expect((await post("[::1]")).status).toBe(403);
    } finally {
      await dual.close();
    }
  });
});
