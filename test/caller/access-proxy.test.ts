import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import * as v from "valibot";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { REFUSED_BY_POLICY_HEADER } from "../../adapters/hono/lock/lock-responses.js";
import { type CallerPolicies, CallerPoliciesSchema } from "../../src/policies/policy-schema.js";
import { createHarness, type Harness, POOL_DOMAIN } from "../lock-api/harness.js";
import { poolRequest } from "../proxy/client.js";
import { TestUpstream } from "../proxy/upstream.js";

const TEAM = "acme.cloudflareaccess.com";
const AUD_TAG = "4714c1358e65fe4b408ad6d432a5f878f08194bdb4752441fd56faefa9b2b6f2";
const IAP_AUDIENCE = "/projects/123/global/backendServices/456";
type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

/** Access-proxy presets on the Lock API and the proxy, over real sockets. */
describe("access-proxy policy", () => {
  let rsa: KeyPair;
  let ec: KeyPair;
  let rsaJwk: JWK & { kty: string };
  let ecJwk: JWK & { kty: string };
  let h: Harness;
  let upstream: TestUpstream;
  let key: string;

  beforeAll(async () => {
    rsa = await generateKeyPair("RS256", { extractable: true });
    ec = await generateKeyPair("ES256", { extractable: true });
    rsaJwk = { ...(await exportJWK(rsa.publicKey)), kid: "cf1" } as JWK & { kty: string };
    ecJwk = { ...(await exportJWK(ec.publicKey)), kid: "iap1" } as JWK & { kty: string };
  });

  async function setUp(accessProxy: NonNullable<CallerPolicies["accessProxy"]>) {
    upstream = await new TestUpstream().start();
    h = await createHarness();
    await h.addPool({
      subdomain: "llm",
      origin: upstream.url,
      maxConcurrent: 4,
      callerPolicies: { accessProxy },
    });
    key = (await h.mintKey("llm")).plaintext;
  }
  afterEach(async () => {
    await h.close();
    await upstream.stop();
  });

  const exp = () => Math.floor(h.clock.now() / 1000) + 300;
  const cloudflareToken = (claims: Record<string, unknown> = {}) =>
    new SignJWT({
      iss: `https://${TEAM}`,
      aud: [AUD_TAG],
      email: "ada@acme.test",
      exp: exp(),
      ...claims,
    })
      .setProtectedHeader({ alg: "RS256", kid: "cf1" })
      .sign(rsa.privateKey);
  const iapToken = (alg: "ES256" | "RS256" = "ES256") =>
    new SignJWT({
      iss: "https://cloud.google.com/iap",
      aud: IAP_AUDIENCE,
      email: "ada@acme.test",
      exp: exp(),
    })
      .setProtectedHeader({ alg, kid: "iap1" })
      .sign(alg === "ES256" ? ec.privateKey : rsa.privateKey);
  const acquire = (headers: Record<string, string>) =>
    h.lockPost("/pools/llm/lock/acquire", { key, headers });
  const proxied = (headers: Record<string, string>) =>
    poolRequest(h.proxy.port, {
      host: `llm.${POOL_DOMAIN}`,
      path: "/v1/models",
      headers: { "x-svc-key": key, ...headers },
    });
  async function expectRefused(response: Response) {
    expect(response.status).toBe(401);
    expect(response.headers.get(REFUSED_BY_POLICY_HEADER)).toBe("access_proxy");
  }

  describe("cloudflare-access", () => {
    it("admits a request carrying a valid Cf-Access-Jwt-Assertion for the application's AUD tag", async () => {
      await setUp({
        preset: "cloudflare-access",
        teamDomain: TEAM,
        audience: AUD_TAG,
        jwks: { keys: [rsaJwk] },
      });
      expect((await acquire({ "cf-access-jwt-assertion": await cloudflareToken() })).status).toBe(
        200,
      );
      expect((await proxied({ "cf-access-jwt-assertion": await cloudflareToken() })).status).toBe(
        200,
      );
      expect(upstream.hits).toBe(1);
    });

    it("refuses a missing assertion, another application's tag, another team, or the token elsewhere", async () => {
      await setUp({
        preset: "cloudflare-access",
        teamDomain: TEAM,
        audience: AUD_TAG,
        jwks: { keys: [rsaJwk] },
      });
      await expectRefused(await acquire({}));
      await expectRefused(
        await acquire({ "cf-access-jwt-assertion": await cloudflareToken({ aud: ["other-app"] }) }),
      );
      await expectRefused(
        await acquire({
          "cf-access-jwt-assertion": await cloudflareToken({
            iss: "https://evil.cloudflareaccess.com",
          }),
        }),
      );
      await expectRefused(await acquire({ authorization: `Bearer ${await cloudflareToken()}` }));
      const reply = await proxied({});
      expect(reply.status).toBe(401);
      expect(upstream.hits).toBe(0);
      expect((await h.governor.status("llm")).held).toBe(0);
    });
  });

  describe("google-iap", () => {
    it("admits an ES256 x-goog-iap-jwt-assertion from IAP's issuer, and refuses another algorithm", async () => {
      await setUp({
        preset: "google-iap",
        audience: IAP_AUDIENCE,
        jwks: { keys: [ecJwk, { ...rsaJwk, kid: "iap1" }] },
      });
      expect((await acquire({ "x-goog-iap-jwt-assertion": await iapToken() })).status).toBe(200);
      await expectRefused(await acquire({ "x-goog-iap-jwt-assertion": await iapToken("RS256") }));
      await expectRefused(await acquire({}));
    });
  });

  describe("trusted-header", () => {
    it("believes the identity header only from the listed proxy, and checks the allow list", async () => {
      await setUp({
        preset: "trusted-header",
        header: "x-auth-request-email",
        trustedProxies: ["127.0.0.1/32"],
        allow: ["@acme.test"],
      });
      expect((await acquire({ "x-auth-request-email": "ada@acme.test" })).status).toBe(200);
      expect((await proxied({ "x-auth-request-email": "ada@acme.test" })).status).toBe(200);
      await expectRefused(await acquire({}));
      await expectRefused(await acquire({ "x-auth-request-email": "eve@evil.test" }));
      expect(upstream.hits).toBe(1);
    });

    it("refuses a header naming more than one identity, whatever its last one is", async () => {
      await setUp({
        preset: "trusted-header",
        header: "x-auth-request-email",
        trustedProxies: ["127.0.0.1/32"],
        allow: ["@acme.test"],
      });
      for (const identity of ["eve@evil.test,ada@acme.test", "eve@evil.test ada@acme.test"]) {
        await expectRefused(await acquire({ "x-auth-request-email": identity }));
        expect((await proxied({ "x-auth-request-email": identity })).status).toBe(401);
      }
      // The header sent twice: two fields, each one identity.
      const twice = await poolRequest(h.proxy.port, {
        host: `llm.${POOL_DOMAIN}`,
        path: "/v1/models",
        headers: {
          "x-svc-key": key,
          "x-auth-request-email": ["eve@evil.test", "ada@acme.test"] as unknown as string,
        },
      });
      expect(twice.status).toBe(401);
      expect(upstream.hits).toBe(0);
      expect((await acquire({ "x-auth-request-email": "ada@acme.test" })).status).toBe(200);
    });

    it("takes an internationalised address as the UTF-8 bytes oauth2-proxy sends, its domain Unicode or xn-- alike", async () => {
      await setUp({
        preset: "trusted-header",
        header: "x-auth-request-email",
        trustedProxies: ["127.0.0.1/32"],
        allow: ["@xn--bcher-kva.example", "zoë@münchen.example", "@voilà.example"],
      });
      // A header's bytes, as a Go proxy writes the string: one latin1 character per byte.
      const utf8 = (text: string) => Buffer.from(text, "utf8").toString("latin1");
      expect((await acquire({ "x-auth-request-email": utf8("jörg@bücher.example") })).status).toBe(
        200,
      );
      expect((await proxied({ "x-auth-request-email": utf8("JÖRG@BÜCHER.example") })).status).toBe(
        200,
      );
      expect((await acquire({ "x-auth-request-email": "ada@xn--bcher-kva.example" })).status).toBe(
        200,
      );
      expect(
        (await acquire({ "x-auth-request-email": utf8("ZOË@xn--mnchen-3ya.example") })).status,
      ).toBe(200);
      // "à" ends in byte 0xa0, a latin1 no-break space: the value is decoded before any trim.
      expect((await acquire({ "x-auth-request-email": utf8("ada@voilà.example") })).status).toBe(
        200,
      );
      expect(upstream.hits).toBe(1);
      for (const identity of [
        // Another domain, another person at an allowed address's domain.
        utf8("eve@evil.example"),
        utf8("eve@münchen.example"),
        // The same characters in latin1: not UTF-8, so no identity.
        "jörg@bücher.example",
        // Two identities, a C1 control, a bidi override, a full-width look-alike of the domain.
        utf8("eve@evil.example, jörg@bücher.example"),
        utf8("jörg\u0085@bücher.example"),
        utf8("eve\u202e@bücher.example"),
        utf8("eve@ｂücher.example"),
        utf8("jörg@bücher.example\u00a0"),
      ]) {
        await expectRefused(await acquire({ "x-auth-request-email": identity }));
        expect((await proxied({ "x-auth-request-email": identity })).status).toBe(401);
      }
      expect(upstream.hits).toBe(1);
    });

    it("refuses allow entries that are neither an address nor an @domain", () => {
      const allow = (entries: string[]) =>
        v
          .safeParse(CallerPoliciesSchema, {
            accessProxy: {
              preset: "trusted-header",
              trustedProxies: ["10.0.0.5/32"],
              allow: entries,
            },
          })
          .issues?.map((issue) => [v.getDotPath(issue), issue.message]) ?? [];
      expect(
        allow([
          "ada@acme.test",
          "@acme.test",
          "ops+llm@eu.acme.test",
          "@bücher.example",
          "@xn--bcher-kva.example",
          "jörg@Bücher.example",
        ]),
      ).toEqual([]);
      const wrong = "Must be an e-mail address (ada@acme.test) or an @domain (@acme.test).";
      const refused = [
        "not an email",
        "@",
        "<script>",
        "a@b@acme.test",
        "a@evil.test,b@acme.test",
        "@xn--zz.example",
        "@ｂücher.example",
        "jörg\u0085@bücher.example",
        "@bücher..example",
      ];
      expect(allow(refused)).toEqual(
        refused.map((_, index) => [`accessProxy.allow.${index}`, wrong]),
      );
    });

    it("refuses the header from any other peer, whatever X-Forwarded-For claims", async () => {
      await setUp({
        preset: "trusted-header",
        header: "x-forwarded-email",
        trustedProxies: ["10.0.0.0/8"],
      });
      await expectRefused(
        await acquire({ "x-forwarded-email": "ada@acme.test", "x-forwarded-for": "10.0.0.2" }),
      );
      const reply = await proxied({ "x-forwarded-email": "ada@acme.test" });
      expect(reply.status).toBe(401);
      expect(upstream.hits).toBe(0);
    });

    it("refuses to be configured without a trusted proxy", () => {
      const result = v.safeParse(CallerPoliciesSchema, {
        accessProxy: { preset: "trusted-header" },
      });
      expect(result.success).toBe(false);
      const empty = v.safeParse(CallerPoliciesSchema, {
        accessProxy: { preset: "trusted-header", trustedProxies: [] },
      });
      expect(empty.success).toBe(false);
      expect(empty.issues?.[0]?.message).toMatch(/needs the proxy's addresses/);
    });
  });
});
