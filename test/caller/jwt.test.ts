import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { KeySetUnavailableError } from "../../adapters/hono/caller/remote-key-sets.js";
import { REFUSED_BY_POLICY_HEADER } from "../../adapters/hono/lock/lock-responses.js";
import type { ManualClock } from "../../src/clock/manual-clock.js";
import type { CallerPolicies } from "../../src/policies/policy-schema.js";
import {
  createHarness,
  type Harness,
  type HarnessOptions,
  POOL_DOMAIN,
} from "../lock-api/harness.js";
import { poolRequest } from "../proxy/client.js";
import { TestUpstream } from "../proxy/upstream.js";

const ISSUER = "https://idp.example";
const AUDIENCE = "sluice-llm";
type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

/** The jwt caller policy on the Lock API and the proxy, over real sockets. */
describe("JWT policy", () => {
  let rsa: KeyPair;
  let other: KeyPair;
  let jwk: JWK & { kty: string };
  let h: Harness;
  let upstream: TestUpstream;
  let key: string;

  beforeAll(async () => {
    rsa = await generateKeyPair("RS256", { extractable: true });
    other = await generateKeyPair("RS256", { extractable: true });
    jwk = { ...(await exportJWK(rsa.publicKey)), kid: "k1", alg: "RS256" } as JWK & { kty: string };
  });

  async function setUp(
    jwt: Partial<NonNullable<CallerPolicies["jwt"]>> = {},
    options: HarnessOptions = {},
    pool: { allowAuthorizationHeader?: boolean } = {},
  ) {
    upstream = await new TestUpstream().start();
    h = await createHarness(options);
    await h.addPool({
      ...pool,
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
          jwks: { keys: [jwk] },
          ...jwt,
        },
      },
    });
    key = (await h.mintKey("llm")).plaintext;
  }
  afterEach(async () => {
    await h.close();
    await upstream.stop();
  });

  const nowSeconds = () => Math.floor(h.clock.now() / 1000);
  function token(
    claims: Record<string, unknown> = {},
    options: { signer?: KeyPair; exp?: number | null; kid?: string } = {},
  ) {
    const jwt = new SignJWT({ sub: "svc-a", iss: ISSUER, aud: AUDIENCE, ...claims })
      .setProtectedHeader({ alg: "RS256", kid: options.kid ?? "k1" })
      .setIssuedAt(nowSeconds());
    if (options.exp !== null) jwt.setExpirationTime(options.exp ?? nowSeconds() + 300);
    return jwt.sign((options.signer ?? rsa).privateKey);
  }
  const acquire = (jwt: string | null, header = "authorization") =>
    h.lockPost("/pools/llm/lock/acquire", {
      key,
      headers: jwt === null ? {} : { [header]: header === "authorization" ? `Bearer ${jwt}` : jwt },
    });
  const proxied = (jwt: string | null) =>
    poolRequest(h.proxy.port, {
      host: `llm.${POOL_DOMAIN}`,
      path: "/v1/models",
      headers: { "x-svc-key": key, ...(jwt === null ? {} : { authorization: `Bearer ${jwt}` }) },
    });
  async function expectRefused(response: Response) {
    expect(response.status).toBe(401);
    expect(response.headers.get(REFUSED_BY_POLICY_HEADER)).toBe("jwt");
    expect(await response.json()).toMatchObject({ error: "unauthorized" });
  }

  it("admits a valid token on the Lock API and the proxy (the key still goes in X-Svc-Key)", async () => {
    await setUp();
    expect((await acquire(await token())).status).toBe(200);
    expect((await proxied(await token())).status).toBe(200);
    expect(upstream.hits).toBe(1);
  });

  it("refuses a missing, expired, not-yet-valid or exp-less token, before a slot or the origin", async () => {
    await setUp();
    await expectRefused(await acquire(null));
    await expectRefused(await acquire(await token({}, { exp: nowSeconds() - 31 })));
    await expectRefused(await acquire(await token({ nbf: nowSeconds() + 60 })));
    await expectRefused(await acquire(await token({}, { exp: null })));
    const refusedProxy = await proxied(await token({}, { exp: nowSeconds() - 31 }));
    expect(refusedProxy.status).toBe(401);
    expect(refusedProxy.headers[REFUSED_BY_POLICY_HEADER]).toBe("jwt");
    expect(upstream.hits).toBe(0);
    expect((await h.governor.status("llm")).held).toBe(0);
    expect(
      (await h.accessLog.list("llm")).every((e) => e.outcome === "refused" && e.reason === "jwt"),
    ).toBe(true);
  });

  it("allows the clock tolerance, and no more", async () => {
    await setUp();
    const exp = nowSeconds() + 10;
    const jwt = await token({}, { exp });
    await (h.clock as ManualClock).advance(35_000);
    expect((await acquire(jwt)).status).toBe(200);
    await (h.clock as ManualClock).advance(10_000);
    await expectRefused(await acquire(jwt));
  });

  it("refuses a wrong audience or issuer, and a token signed by another key", async () => {
    await setUp();
    await expectRefused(await acquire(await token({ aud: "another-app" })));
    await expectRefused(await acquire(await token({ iss: "https://evil.example" })));
    await expectRefused(await acquire(await token({}, { signer: other })));
    await expectRefused(await acquire("not.a.jwt"));
  });

  it("refuses alg none and an HS256 token keyed with the public key (algorithm confusion)", async () => {
    const pem = await exportSPKI(rsa.publicKey);
    await setUp({ jwks: undefined, publicKey: pem });
    expect((await acquire(await token())).status).toBe(200);
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const claims = { sub: "svc-a", iss: ISSUER, aud: AUDIENCE, exp: nowSeconds() + 300 };
    await expectRefused(await acquire(`${part({ alg: "none" })}.${part(claims)}.`));
    const confused = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(pem));
    await expectRefused(await acquire(confused));
  });

  it("checks required claims against their allowed values", async () => {
    await setUp({ requiredClaims: { sub: ["svc-a", "svc-b"], groups: ["llm-users"] } });
    expect((await acquire(await token({ groups: ["ops", "llm-users"] }))).status).toBe(200);
    await expectRefused(await acquire(await token({ sub: "svc-c", groups: ["llm-users"] })));
    await expectRefused(await acquire(await token({ groups: ["ops"] })));
    await expectRefused(await acquire(await token()));
  });

  it("tells a caller who sends the pool key in Authorization, where the JWT goes, to use X-Svc-Key", async () => {
    await setUp({}, {}, { allowAuthorizationHeader: true });
    const response = await h.lockPost("/pools/llm/lock/acquire", {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get(REFUSED_BY_POLICY_HEADER)).toBe("jwt");
    expect(((await response.json()) as { message: string }).message).toBe(
      "This pool reads a JWT from Authorization: Bearer <jwt>: send the pool key in X-Svc-Key instead.",
    );
  });

  it("reads the token from a configured header", async () => {
    await setUp({ header: "x-caller-token" });
    expect((await acquire(await token(), "x-caller-token")).status).toBe(200);
    await expectRefused(await acquire(await token()));
  });

  describe("JWKS URL", () => {
    let keyServer: Server;
    let fetches = 0;
    beforeAll(async () => {
      keyServer = createServer((_request, response) => {
        fetches++;
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ keys: [jwk] }));
      });
      await new Promise<void>((resolve) => keyServer.listen(0, "127.0.0.1", resolve));
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => keyServer.close(() => resolve()));
    });

    it("verifies against keys fetched once and cached", async () => {
      const port = (keyServer.address() as AddressInfo).port;
      await setUp(
        { jwks: undefined, jwksUrl: `http://127.0.0.1:${port}/certs` },
        { jwksNetwork: "private" },
      );
      expect((await acquire(await token())).status).toBe(200);
      expect((await acquire(await token())).status).toBe(200);
      expect((await proxied(await token())).status).toBe(200);
      await expectRefused(await acquire(await token({}, { signer: other })));
      expect(fetches).toBe(1);
    });
  });

  describe("JWKS URL that cannot be fetched", () => {
    /** A key server that takes `delayMs` to answer (Infinity: never). */
    async function keyServerAnswering(delayMs: number) {
      const server = createServer((_request, response) => {
        if (delayMs === Number.POSITIVE_INFINITY) return;
        setTimeout(() => {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({ keys: [jwk] }));
        }, delayMs);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const port = (server.address() as AddressInfo).port;
      return {
        url: `http://127.0.0.1:${port}/certs`,
        close: () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      };
    }
    const unavailableLogged = () =>
      h.loggedErrors.filter((error) => error instanceof KeySetUnavailableError);

    it("refuses with 401 once the configured timeout passes, says so without the token, and logs it once", async () => {
      const silent = await keyServerAnswering(Number.POSITIVE_INFINITY);
      try {
        await setUp(
          { jwks: undefined, jwksUrl: silent.url },
          { jwksTimeoutMs: 300, jwksNetwork: "private" },
        );
        const jwt = await token();
        const started = performance.now();
        const refused = await acquire(jwt);
        const waited = performance.now() - started;
        expect(refused.status).toBe(401);
        expect(refused.headers.get(REFUSED_BY_POLICY_HEADER)).toBe("jwt");
        const body = (await refused.json()) as { error: string; message: string };
        expect(body.error).toBe("unauthorized");
        expect(body.message).toContain("the key set could not be fetched");
        expect(body.message).not.toContain(jwt);
        // Bounded by the configured 300 ms, far below the 5 s default.
        expect(waited).toBeGreaterThanOrEqual(280);
        expect(waited).toBeLessThan(3_000);

        await expectRefused(await acquire(await token()));
        const proxiedRefusal = await proxied(await token());
        expect(proxiedRefusal.status).toBe(401);
        expect(upstream.hits).toBe(0);
        expect((await h.governor.status("llm")).held).toBe(0);
        // The operator hears of the outage once, not once per refused caller.
        const logged = unavailableLogged();
        expect(logged).toHaveLength(1);
        expect(logged[0]!.message).toBe(
          `The JWKS at ${silent.url} could not be fetched: timed out.`,
        );
      } finally {
        await silent.close();
      }
    });

    it("refuses an older setting's URL with a user and password without fetching it, and logs neither it nor the query", async () => {
      const server = await keyServerAnswering(0);
      try {
        const url = new URL(server.url);
        const stored = `http://svc:pw-secret-456@${url.host}/certs?token=q-secret-123`;
        await setUp({ jwks: undefined, jwksUrl: stored }, { jwksNetwork: "private" });
        await expectRefused(await acquire(await token()));
        const logged = unavailableLogged();
        expect(logged.map((error) => error.message)).toEqual([
          `The JWKS at ${server.url} could not be fetched: the URL holds a user or password (user:password@), which is never sent.`,
        ]);
        const everything = JSON.stringify(logged.map((e) => [e.message, String(e.cause)]));
        expect(everything).not.toContain("pw-secret-456");
        expect(everything).not.toContain("q-secret-123");
      } finally {
        await server.close();
      }
    });

    it("refuses when nothing listens at the URL, and waits for a slow key server within the timeout", async () => {
      const gone = await keyServerAnswering(0);
      const goneUrl = gone.url;
      await gone.close();
      await setUp(
        { jwks: undefined, jwksUrl: goneUrl },
        { jwksTimeoutMs: 2_000, jwksNetwork: "private" },
      );
      const refused = await acquire(await token());
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { message: string }).message).toContain(
        "the key set could not be fetched",
      );
      expect(unavailableLogged().map((error) => error.message)).toEqual([
        `The JWKS at ${goneUrl} could not be fetched: fetch failed (ECONNREFUSED).`,
      ]);
      await h.close();
      await upstream.stop();

      const slow = await keyServerAnswering(300);
      try {
        await setUp(
          { jwks: undefined, jwksUrl: slow.url },
          { jwksTimeoutMs: 2_000, jwksNetwork: "private" },
        );
        expect((await acquire(await token())).status).toBe(200);
        expect(unavailableLogged()).toHaveLength(0);
      } finally {
        await slow.close();
      }
    });
  });
});
