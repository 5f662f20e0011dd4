import { afterEach, describe, expect, it } from "vitest";
import { createLockApp } from "../../adapters/hono/lock/create-lock-app.js";
import { REFUSED_BY_POLICY_HEADER } from "../../adapters/hono/lock/lock-responses.js";
import { RedisNonceStore } from "../../adapters/redis/redis-nonce-store.js";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import { signLockRequest } from "../../src/policies/request-signing.js";
import { createHarness, type Harness, listen, POOL_DOMAIN, readBody } from "../lock-api/harness.js";
import { poolRequest } from "../proxy/client.js";
import { TestUpstream } from "../proxy/upstream.js";
import { deleteKeys, REDIS_URL, requireRedis, uniquePrefix } from "../redis/redis-harness.js";

const ACQUIRE = "/pools/llm/lock/acquire";
const BODY = '{"waitMs":0}';

/** The hmac caller policy on the Lock API and the proxy, over real sockets. */
describe("HMAC request signing policy", () => {
  let h: Harness;
  let upstream: TestUpstream;
  let key: { id: number; plaintext: string; secret: string };

  async function setUp(options: Parameters<typeof createHarness>[0] = {}) {
    upstream = await new TestUpstream().start();
    h = await createHarness(options);
    await h.addPool({
      subdomain: "llm",
      origin: upstream.url,
      maxConcurrent: 4,
      callerPolicies: { hmac: { skewSeconds: 300 } },
    });
    const minted = await h.mintKey("llm");
    key = {
      id: minted.key.id,
      plaintext: minted.plaintext,
      secret: minted.requestSecret as string,
    };
  }
  afterEach(async () => {
    await h.close();
    await upstream.stop();
  });

  const now = () => h.clock.now();
  const sign = (method: string, url: string, body?: string, overrides: object = {}) =>
    signLockRequest({
      secret: key.secret,
      keyId: key.id,
      method,
      url,
      body,
      timestamp: now(),
      ...overrides,
    });
  const acquire = (headers: Record<string, string>, body = BODY) =>
    h.lockPost(ACQUIRE, { key: key.plaintext, headers, body });
  const proxied = (path: string, headers: Record<string, string>, body?: string) =>
    poolRequest(h.proxy.port, {
      host: `llm.${POOL_DOMAIN}`,
      method: body === undefined ? "GET" : "POST",
      path,
      headers: {
        "x-svc-key": key.plaintext,
        ...(body === undefined
          ? {}
          : { "content-type": "text/plain", "content-length": String(Buffer.byteLength(body)) }),
        ...headers,
      },
      body,
    });
  const held = async () => (await h.governor.status("llm")).held;
  /** A 401 `unauthorized` from the hmac policy, from the Lock API (fetch) or the proxy (node:http). */
  async function expectRefused(
    response: Response | { status: number; headers: Record<string, unknown>; body: string },
  ) {
    expect(response.status).toBe(401);
    if (typeof response.body === "string") {
      const reply = response as { headers: Record<string, unknown>; body: string };
      expect(reply.headers[REFUSED_BY_POLICY_HEADER]).toBe("hmac");
      expect(JSON.parse(reply.body)).toMatchObject({ error: "unauthorized" });
    } else {
      const reply = response as Response;
      expect(reply.headers.get(REFUSED_BY_POLICY_HEADER)).toBe("hmac");
      expect(await readBody(reply)).toMatchObject({ error: "unauthorized" });
    }
  }

  it("mints a request-signing secret with each key of the pool, shown once", async () => {
    await setUp();
    expect(key.secret).toMatch(/^slc_req_/);
    // Stored encrypted: the plaintext is nowhere in the database.
    const rows = JSON.stringify(h.database.prepare("SELECT * FROM pool_keys").all());
    expect(rows).not.toContain(key.secret);
  });

  it("admits a correctly signed acquire and proxied request", async () => {
    await setUp();
    const response = await acquire(sign("POST", ACQUIRE, BODY));
    expect(response.status).toBe(200);
    expect(
      (await proxied("/v1/chat?x=1", sign("POST", "/v1/chat?x=1", "hello"), "hello")).status,
    ).toBe(200);
    expect(upstream.hits).toBe(1);
    // The origin got the body the signature covered, and none of the signature headers.
    expect(upstream.seen[0]?.body.toString()).toBe("hello");
    expect(upstream.seen[0]?.headers["x-svc-request-signature"]).toBeUndefined();
  });

  it("refuses unsigned requests, before a slot or the origin", async () => {
    await setUp();
    await expectRefused(await acquire({}));
    await expectRefused(await proxied("/v1/models", {}));
    expect(upstream.hits).toBe(0);
    expect(await held()).toBe(0);
    const reasons = (await h.accessLog.list("llm")).map((e) => [e.outcome, e.reason]);
    expect(reasons).toEqual([
      ["refused", "hmac"],
      ["refused", "hmac"],
    ]);
  });

  it("refuses a timestamp outside the skew, and admits one just inside it", async () => {
    await setUp();
    await expectRefused(await acquire(sign("POST", ACQUIRE, BODY, { timestamp: now() - 300_001 })));
    await expectRefused(await acquire(sign("POST", ACQUIRE, BODY, { timestamp: now() + 300_001 })));
    await expectRefused(
      await proxied(
        "/v1/models",
        sign("GET", "/v1/models", undefined, { timestamp: now() - 300_001 }),
      ),
    );
    expect(
      (await acquire(sign("POST", ACQUIRE, BODY, { timestamp: now() - 299_000 }))).status,
    ).toBe(200);
    expect(upstream.hits).toBe(0);
  });

  it("says the timestamp is in milliseconds when it was given in seconds", async () => {
    await setUp();
    const seconds = Math.floor(now() / 1000);
    const response = await acquire(sign("POST", ACQUIRE, BODY, { timestamp: seconds }));
    await expectRefused(response.clone());
    expect((await readBody(response)).message).toBe(
      "x-svc-request-timestamp must be epoch milliseconds (13 digits; seconds times 1000).",
    );
  });

  it("refuses a replay on the same server, until the signature's window has passed", async () => {
    await setUp();
    const headers = sign("POST", ACQUIRE, BODY);
    expect((await acquire(headers)).status).toBe(200);
    await expectRefused(await acquire(headers));
    const proxyHeaders = sign("GET", "/v1/models");
    expect((await proxied("/v1/models", proxyHeaders)).status).toBe(200);
    await expectRefused(await proxied("/v1/models", proxyHeaders));
    expect(upstream.hits).toBe(1);
    // Past the window the old headers are refused as stale, not admitted.
    await (h.clock as ManualClock).advance(300_001);
    await expectRefused(await acquire(headers));
  });

  it("refuses a tampered body, path or query", async () => {
    await setUp();
    await expectRefused(await acquire(sign("POST", ACQUIRE, BODY), '{"waitMs":5}'));
    await expectRefused(await acquire(sign("POST", "/pools/other/lock/acquire", BODY)));
    await expectRefused(
      await proxied("/v1/chat?x=2", sign("POST", "/v1/chat?x=1", "hello"), "hello"),
    );
    await expectRefused(
      await proxied("/v1/chat?x=1", sign("POST", "/v1/chat?x=1", "hello"), "HELLO"),
    );
    await expectRefused(await proxied("/v1/admin", sign("GET", "/v1/models")));
    expect(upstream.hits).toBe(0);
    expect(await held()).toBe(0);
  });

  it("signs an absolute URL as fetch sends it: non-ASCII, spaces, dot segments", async () => {
    await setUp();
    const targets = [
      `${ACQUIRE}?who=jörg&note=a b`,
      "/pools/llm/x/../lock/./acquire?x=1",
      `${ACQUIRE}?x=1#part`,
    ];
    for (const target of targets) {
      const url = `${h.lock.url}${target}`;
      const response = await fetch(url, {
        method: "POST",
        body: BODY,
        headers: {
          ...sign("POST", url, BODY),
          "x-svc-key": key.plaintext,
          "content-type": "application/json",
        },
      });
      expect(response.status, target).toBe(200);
      const { slotId } = (await response.json()) as { slotId: string };
      await h.lockPost(`/pools/llm/lock/${slotId}/release`, { key: key.plaintext });
    }
  });

  it("tells a keyless caller of an open signed pool that signing needs a key", async () => {
    await setUp();
    await h.addPool({
      subdomain: "open",
      origin: upstream.url,
      maxConcurrent: 1,
      requireKey: false,
      callerPolicies: { hmac: { skewSeconds: 300 } },
    });
    // Signature headers without a key: there is no secret they could have been made with.
    const headers = sign("POST", "/pools/open/lock/acquire", BODY);
    const response = await h.lockPost("/pools/open/lock/acquire", { headers, body: BODY });
    await expectRefused(response.clone());
    expect((await readBody(response)).message).toBe(
      "This pool requires signed requests, signed with a pool key's request-signing secret: send that key in X-Svc-Key with the signature headers.",
    );
    expect(upstream.hits).toBe(0);
  });

  it("refuses a signature made with another key's secret, or by a key minted before the policy", async () => {
    await setUp();
    const other = await h.mintKey("llm");
    const forged = signLockRequest({
      secret: other.requestSecret as string,
      keyId: key.id,
      method: "POST",
      url: ACQUIRE,
      body: BODY,
      timestamp: now(),
    });
    await expectRefused(await acquire(forged));
    await h.addPool({ subdomain: "old", origin: upstream.url, maxConcurrent: 1 });
    const old = await h.mintKey("old");
    expect(old.requestSecret).toBeUndefined();
    await h.addPool({
      subdomain: "old",
      origin: upstream.url,
      maxConcurrent: 1,
      callerPolicies: { hmac: { skewSeconds: 300 } },
    });
    const response = await h.lockPost("/pools/old/lock/acquire", {
      key: old.plaintext,
      headers: sign("POST", "/pools/old/lock/acquire", BODY),
      body: BODY,
    });
    expect(response.status).toBe(401);
    expect((await readBody(response)).message).toMatch(/mint a new key/);
  });

  it("sits on top of the IP allowlist: both must pass", async () => {
    upstream = await new TestUpstream().start();
    h = await createHarness();
    await h.addPool({
      subdomain: "llm",
      origin: upstream.url,
      maxConcurrent: 4,
      callerPolicies: { hmac: { skewSeconds: 300 }, ipAllowlist: ["10.0.0.0/8"] },
    });
    const minted = await h.mintKey("llm");
    key = {
      id: minted.key.id,
      plaintext: minted.plaintext,
      secret: minted.requestSecret as string,
    };
    const refused = await acquire(sign("POST", ACQUIRE, BODY));
    expect(refused.status).toBe(403);
    expect(refused.headers.get(REFUSED_BY_POLICY_HEADER)).toBe("ip_allowlist");
    await h.addPool({
      subdomain: "llm",
      origin: upstream.url,
      maxConcurrent: 4,
      callerPolicies: { hmac: { skewSeconds: 300 }, ipAllowlist: ["127.0.0.1"] },
    });
    await expectRefused(await acquire({}));
    expect((await acquire(sign("POST", ACQUIRE, BODY))).status).toBe(200);
  });
});

const redis = await requireRedis("hmac replay across servers");

describe.runIf(redis)("HMAC replay across servers sharing Redis", () => {
  const prefix = uniquePrefix("hmac-replay");
  afterEach(async () => deleteKeys(prefix));

  it("catches a request replayed to another server", async () => {
    const nonces = [
      new RedisNonceStore({ url: REDIS_URL, prefix }),
      new RedisNonceStore({ url: REDIS_URL, prefix }),
    ];
    const h = await createHarness({ nonces: nonces[0] });
    // A second server over the same catalog, with its own connection to the shared Redis.
    const second = await listen(
      createLockApp({ governor: h.governor, catalog: h.catalog, nonces: nonces[1] }).fetch,
    );
    try {
      await h.addPool({
        subdomain: "llm",
        maxConcurrent: 4,
        callerPolicies: { hmac: { skewSeconds: 300 } },
      });
      const minted = await h.mintKey("llm");
      const headers = {
        ...signLockRequest({
          secret: minted.requestSecret as string,
          keyId: minted.key.id,
          method: "POST",
          url: ACQUIRE,
          body: BODY,
          timestamp: h.clock.now(),
        }),
        "x-svc-key": minted.plaintext,
        "content-type": "application/json",
      };
      const first = await fetch(`${h.lock.url}${ACQUIRE}`, { method: "POST", headers, body: BODY });
      expect(first.status).toBe(200);
      const replayed = await fetch(`${second.url}${ACQUIRE}`, {
        method: "POST",
        headers,
        body: BODY,
      });
      expect(replayed.status).toBe(401);
      expect(replayed.headers.get(REFUSED_BY_POLICY_HEADER)).toBe("hmac");
      expect((await h.governor.status("llm")).held).toBe(1);
    } finally {
      await second.close();
      await h.close();
      await Promise.all(nonces.map((store) => store.close()));
    }
  });
});
