import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { JwksNetwork } from "../../adapters/hono/caller/key-set-fetch.js";
import { KeySetUnavailableError } from "../../adapters/hono/caller/remote-key-sets.js";
import { REFUSED_BY_POLICY_HEADER } from "../../adapters/hono/lock/lock-responses.js";
import { createHarness, type Harness, POOL_DOMAIN } from "../lock-api/harness.js";
import { poolRequest } from "../proxy/client.js";
import { TestUpstream } from "../proxy/upstream.js";

const ISSUER = "https://idp.example";
const AUDIENCE = "sluice-llm";
const PRIVATE_REFUSAL = "it points at a private address (allowed only with --jwks-network private)";
type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

/** A key server on 127.0.0.1 answering each request with `handler`; counts its requests. */
async function keyServer(handler: (request: IncomingMessage, response: ServerResponse) => void) {
  let hits = 0;
  const server = createServer((request, response) => {
    hits++;
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path = "/certs", host = "127.0.0.1") => `http://${host}:${port}${path}`,
    get hits() {
      return hits;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
type KeyServer = Awaited<ReturnType<typeof keyServer>>;

/**
 * JWKS URLs are chosen by team admins, so the server fetches them guarded against
 * server-side request forgery: no private addresses unless the operator allows them, no
 * redirects, a size cap. A refused fetch is an unreachable key set: 401, logged once.
 */
describe("JWKS URL network guard", () => {
  let rsa: KeyPair;
  let jwk: JWK & { kty: string };
  let h: Harness | undefined;
  let upstream: TestUpstream | undefined;
  const servers: KeyServer[] = [];
  let key: string;

  beforeAll(async () => {
    rsa = await generateKeyPair("RS256", { extractable: true });
    jwk = { ...(await exportJWK(rsa.publicKey)), kid: "k1", alg: "RS256" } as JWK & { kty: string };
  });
  afterEach(async () => {
    await h?.close();
    await upstream?.stop();
    await Promise.all(servers.splice(0).map((server) => server.close()));
    h = undefined;
    upstream = undefined;
  });

  const keysAnswer = (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ keys: [jwk] }));
  };
  async function startKeyServer(
    handler: (request: IncomingMessage, response: ServerResponse) => void = keysAnswer,
  ) {
    const server = await keyServer(handler);
    servers.push(server);
    return server;
  }

  async function setUp(jwksUrl: string, jwksNetwork?: JwksNetwork, jwksTimeoutMs?: number) {
    upstream = await new TestUpstream().start();
    h = await createHarness({
      ...(jwksNetwork ? { jwksNetwork } : {}),
      ...(jwksTimeoutMs ? { jwksTimeoutMs } : {}),
    });
    await h.addPool({
      subdomain: "llm",
      origin: upstream.url,
      maxConcurrent: 4,
      callerPolicies: {
        jwt: {
          header: "authorization",
          algorithms: ["RS256"],
          issuer: ISSUER,
          audience: AUDIENCE,
          clockToleranceSeconds: 30,
          jwksUrl,
        },
      },
    });
    key = (await h.mintKey("llm")).plaintext;
  }

  function token() {
    const now = Math.floor((h as Harness).clock.now() / 1000);
    return new SignJWT({ sub: "svc-a", iss: ISSUER, aud: AUDIENCE })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(rsa.privateKey);
  }
  const acquire = async () =>
    (h as Harness).lockPost("/pools/llm/lock/acquire", {
      key,
      headers: { authorization: `Bearer ${await token()}` },
    });
  const proxied = async () =>
    poolRequest((h as Harness).proxy.port, {
      host: `llm.${POOL_DOMAIN}`,
      path: "/v1/models",
      headers: { "x-svc-key": key, authorization: `Bearer ${await token()}` },
    });
  const logged = () =>
    (h as Harness).loggedErrors
      .filter((error) => error instanceof KeySetUnavailableError)
      .map((error) => error.message);

  /** Refused on the Lock API and the proxy as an unreachable key set; no slot, no origin. */
  async function expectRefusedBoth() {
    const refused = await acquire();
    expect(refused.status).toBe(401);
    expect(refused.headers.get(REFUSED_BY_POLICY_HEADER)).toBe("jwt");
    expect(await refused.json()).toEqual({
      error: "unauthorized",
      message: "The token in authorization was refused: the key set could not be fetched.",
    });
    const refusedProxy = await proxied();
    expect(refusedProxy.status).toBe(401);
    expect(refusedProxy.headers[REFUSED_BY_POLICY_HEADER]).toBe("jwt");
    expect(upstream?.hits).toBe(0);
    expect((await (h as Harness).governor.status("llm")).held).toBe(0);
  }

  it("refuses a key server on 127.0.0.1 by default without connecting, logs it once without the query", async () => {
    const server = await startKeyServer();
    await setUp(server.url("/certs?token=q-secret-123"));
    await expectRefusedBoth();
    await expectRefusedBoth();
    expect(server.hits).toBe(0);
    expect(logged()).toEqual([
      `The JWKS at ${server.url()} could not be fetched: ${PRIVATE_REFUSAL}.`,
    ]);
    expect(JSON.stringify(logged())).not.toContain("q-secret-123");
  });

  it("accepts the same key server when the network is private", async () => {
    const server = await startKeyServer();
    await setUp(server.url(), "private");
    expect((await acquire()).status).toBe(200);
    expect((await proxied()).status).toBe(200);
    expect(upstream?.hits).toBe(1);
    expect(server.hits).toBe(1);
    expect(logged()).toEqual([]);
  });

  it("refuses https literal hosts that are private: metadata, loopback and IPv4-mapped IPv6", async () => {
    const server = await startKeyServer();
    for (const url of [
      "https://169.254.169.254/latest/meta-data/jwks",
      `https://127.0.0.1:${server.port}/https-literal`,
      `https://[::ffff:127.0.0.1]:${server.port}/mapped`,
      `https://[::ffff:a9fe:a9fe]/mapped-metadata`,
      `https://[::1]:${server.port}/v6-loopback`,
      "https://10.0.0.1/private",
    ]) {
      await setUp(url);
      await expectRefusedBoth();
      expect(logged()).toEqual([
        `The JWKS at ${new URL(url).origin}${new URL(url).pathname} could not be fetched: ${PRIVATE_REFUSAL}.`,
      ]);
      await h?.close();
      await upstream?.stop();
    }
    h = undefined;
    upstream = undefined;
    expect(server.hits).toBe(0);
  });

  it("refuses a host name that resolves to loopback (checked when connecting), unless private", async () => {
    const server = await startKeyServer();
    await setUp(server.url("/by-name", "localhost"));
    await expectRefusedBoth();
    expect(server.hits).toBe(0);
    expect(logged()).toEqual([
      `The JWKS at ${server.url("/by-name", "localhost")} could not be fetched: ${PRIVATE_REFUSAL}.`,
    ]);
    await h?.close();
    await upstream?.stop();

    await setUp(server.url("/by-name", "localhost"), "private");
    expect((await acquire()).status).toBe(200);
    expect(server.hits).toBe(1);
  });

  it("does not follow a redirect from an allowed key server to another", async () => {
    const elsewhere = await startKeyServer();
    const redirecting = await startKeyServer((_request, response) => {
      response.writeHead(302, { location: elsewhere.url() }).end();
    });
    await setUp(redirecting.url("/moved"), "private");
    await expectRefusedBoth();
    // Asked once (the second attempt falls in the retry interval after a failure), followed never.
    expect(redirecting.hits).toBe(1);
    expect(elsewhere.hits).toBe(0);
    expect(logged()).toEqual([
      `The JWKS at ${redirecting.url("/moved")} could not be fetched: it answered with a redirect (HTTP 302), which is not followed.`,
    ]);
  });

  it("refuses a key set larger than 512 KiB", async () => {
    const server = await startKeyServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ keys: [jwk], padding: "x".repeat(600 * 1024) }));
    });
    await setUp(server.url("/big"), "private");
    await expectRefusedBoth();
    expect(logged()).toEqual([
      `The JWKS at ${server.url("/big")} could not be fetched: the key set is larger than 524288 bytes.`,
    ]);
  });

  it("still times out on a key server that sends its headers and stalls the body", async () => {
    const server = await startKeyServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"keys":[');
    });
    await setUp(server.url("/stalled"), "private", 300);
    const started = performance.now();
    expect((await acquire()).status).toBe(401);
    expect(performance.now() - started).toBeGreaterThanOrEqual(280);
    expect(logged()).toEqual([
      `The JWKS at ${server.url("/stalled")} could not be fetched: timed out.`,
    ]);
  });

  it("guards an access-proxy preset's certs URL too (a team domain that is an address)", async () => {
    upstream = await new TestUpstream().start();
    h = await createHarness();
    await h.addPool({
      subdomain: "walled",
      origin: upstream.url,
      maxConcurrent: 4,
      callerPolicies: {
        accessProxy: {
          preset: "cloudflare-access",
          teamDomain: "169.254.169.254",
          audience: "aud",
        },
      },
    });
    const walledKey = (await h.mintKey("walled")).plaintext;
    const refused = await h.lockPost("/pools/walled/lock/acquire", {
      key: walledKey,
      headers: { "cf-access-jwt-assertion": await token() },
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get(REFUSED_BY_POLICY_HEADER)).toBe("access_proxy");
    expect(logged()).toEqual([
      `The JWKS at https://169.254.169.254/cdn-cgi/access/certs could not be fetched: ${PRIVATE_REFUSAL}.`,
    ]);
  });
});
