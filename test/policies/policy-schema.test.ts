import { generateKeyPairSync } from "node:crypto";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { SECRET_KEY_MESSAGE } from "../../src/policies/policy-inputs.js";
import { CallerPoliciesSchema } from "../../src/policies/policy-schema.js";

const JWK = {
  kty: "EC",
  crv: "P-256",
  x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
  y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
};
const jwt = {
  algorithms: ["ES256"],
  issuer: "https://idp.example",
  audience: "sluice",
  jwks: { keys: [JWK] },
};
const messages = (input: unknown) =>
  v.safeParse(CallerPoliciesSchema, input).issues?.map((issue) => issue.message) ?? [];

describe("CallerPoliciesSchema", () => {
  it("fills the defaults", () => {
    expect(v.parse(CallerPoliciesSchema, { hmac: {}, jwt })).toMatchObject({
      hmac: { skewSeconds: 300 },
      jwt: { header: "authorization", clockToleranceSeconds: 30 },
    });
  });

  it("refuses a symmetric or absent algorithm (no shared JWT secret, no alg none)", () => {
    expect(messages({ jwt: { ...jwt, algorithms: ["HS256"] } })).toEqual([
      "Must be an asymmetric JWS algorithm such as RS256, ES256 or EdDSA.",
    ]);
    expect(messages({ jwt: { ...jwt, algorithms: ["none"] } })).toHaveLength(1);
    expect(messages({ jwt: { ...jwt, algorithms: [] } })).toHaveLength(1);
  });

  it("needs exactly one key source, public keys only", () => {
    const { jwks: _jwks, ...noKeys } = jwt;
    expect(messages({ jwt: noKeys })).toEqual([
      "Give exactly one of jwks (pasted), publicKey (PEM) or jwksUrl.",
    ]);
    expect(messages({ jwt: { ...jwt, jwksUrl: "https://idp.example/jwks" } })).toHaveLength(1);
    expect(messages({ jwt: { ...jwt, jwks: { keys: [{ ...JWK, d: "secret" }] } } })).toEqual([
      SECRET_KEY_MESSAGE,
    ]);
    expect(
      messages({ jwt: { ...jwt, jwks: { keys: [{ kty: "oct", k: "c2VjcmV0" }] } } }),
    ).toHaveLength(1);
  });

  it("refuses private or secret key material as such: a private PEM, a JWK with k", () => {
    const { jwks: _jwks, ...noKeys } = jwt;
    const pem =
      "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----";
    expect(messages({ jwt: { ...noKeys, publicKey: pem } })).toEqual([SECRET_KEY_MESSAGE]);
    // A symmetric secret whatever kty it claims.
    const k = { keys: [{ ...JWK, k: "c2VjcmV0" }] };
    expect(messages({ jwt: { ...noKeys, jwks: k } })).toEqual([SECRET_KEY_MESSAGE]);
    expect(
      messages({ accessProxy: { preset: "google-iap", audience: "/projects/1/apps/p", jwks: k } }),
    ).toEqual([SECRET_KEY_MESSAGE]);
  });

  it("refuses a claim name an object reader drops (__proto__), rather than dropping the rule", () => {
    const claims = JSON.parse('{"__proto__": ["svc-a"], "sub": ["svc-b"]}');
    const result = v.safeParse(CallerPoliciesSchema, { jwt: { ...jwt, requiredClaims: claims } });
    expect(result.issues?.map((issue) => [v.getDotPath(issue), issue.message])).toEqual([
      [
        "jwt.requiredClaims",
        "__proto__ cannot be a claim name here (it would be dropped): name the claim another way.",
      ],
    ]);
    expect(messages({ jwt: { ...jwt, requiredClaims: { constructor: ["x"] } } })).toHaveLength(1);
    expect(messages({ jwt: { ...jwt, requiredClaims: { sub: ["123", 123, true] } } })).toEqual([]);
  });

  it("refuses a token header Sluice or the connection owns, or the access proxy's", () => {
    const header = (name: string, accessProxy?: unknown) =>
      v
        .safeParse(CallerPoliciesSchema, { jwt: { ...jwt, header: name }, accessProxy })
        .issues?.map((issue) => [v.getDotPath(issue), issue.message]) ?? [];
    expect(header("x-caller-token")).toEqual([]);
    expect(header("authorization")).toEqual([]);
    expect(header("X-Svc-Key")).toEqual([
      [
        "jwt.header",
        "x-svc-key is Sluice's own header (the pool key and request signatures go in X-Svc-…): use another, such as x-caller-token.",
      ],
    ]);
    for (const name of [
      "x-svc-request-nonce",
      "host",
      "connection",
      "transfer-encoding",
      "upgrade",
      "te",
    ]) {
      expect(header(name)).toHaveLength(1);
    }
    const proxy = { preset: "trusted-header", trustedProxies: ["10.0.0.5/32"] };
    expect(header("x-auth-request-email", proxy)).toEqual([
      [
        "jwt.header",
        "This is the access proxy's header: the JWT policy needs a header of its own.",
      ],
    ]);
    expect(header("x-auth-request-email")).toEqual([]);
  });

  it("takes https key set URLs, and http only on localhost", () => {
    const { jwks: _jwks, ...noKeys } = jwt;
    expect(messages({ jwt: { ...noKeys, jwksUrl: "https://idp.example/jwks" } })).toEqual([]);
    expect(messages({ jwt: { ...noKeys, jwksUrl: "http://127.0.0.1:8000/jwks" } })).toEqual([]);
    expect(messages({ jwt: { ...noKeys, jwksUrl: "http://idp.example/jwks" } })).toEqual([
      "Must be an https:// URL (http:// only on localhost).",
    ]);
    expect(messages({ jwt: { ...noKeys, jwksUrl: "ftp://idp.example/jwks" } })).toHaveLength(1);
  });

  it("refuses a key set URL that cannot work: credentials, a fragment, an endless host", () => {
    const { jwks: _jwks, ...noKeys } = jwt;
    const url = (jwksUrl: string) => messages({ jwt: { ...noKeys, jwksUrl } });
    expect(url("https://idp.example/jwks?tenant=acme")).toEqual([]);
    expect(url("https://user:pw@idp.example/jwks")).toEqual([
      "Must not hold a user or password (user:password@): a key set URL is fetched without credentials.",
    ]);
    expect(url("https://user@idp.example/jwks")).toHaveLength(1);
    expect(url("https://idp.example/jwks#keys")).toEqual([
      "Must not have a #fragment (it is never sent).",
    ]);
    expect(url("https://idp.example/jwks#")).toHaveLength(1);
    expect(url(`https://${"a".repeat(3000)}.example/jwks`)).toEqual([
      "Must be at most 2048 characters.",
    ]);
  });

  it("requires iss and aud, and bounds the tolerance and skew", () => {
    expect(messages({ jwt: { ...jwt, issuer: "" } })).toHaveLength(1);
    expect(messages({ jwt: { ...jwt, audience: [] } })).toHaveLength(1);
    expect(messages({ jwt: { ...jwt, clockToleranceSeconds: 301 } })).toHaveLength(1);
    expect(messages({ hmac: { skewSeconds: 0 } })).toHaveLength(1);
    expect(messages({ hmac: { skewSeconds: 3601 } })).toEqual(["At most 3600 (an hour)."]);
  });

  it("names a CIDR that is none, and an unknown preset or field", () => {
    expect(messages({ ipAllowlist: ["10.0.0.0/8", "10.0.0.0/40"] })[0]).toMatch(
      /"10.0.0.0\/40" is not an IP address or CIDR/,
    );
    expect(messages({ accessProxy: { preset: "okta" } })).toHaveLength(1);
    expect(messages({ ipAllowList: ["10.0.0.0/8"] })).toHaveLength(1);
  });

  it("takes only keys some listed algorithm verifies: RSA for RS/PS, each EC curve for its ES, Ed25519 for EdDSA", () => {
    const { jwks: _jwks, ...noKeys } = jwt;
    // One overload per key type in Node's typings; any of them returns KeyObjects without an encoding.
    const pem = (type: string, options: object = {}) =>
      String(
        generateKeyPairSync(type as "ec", options as { namedCurve: string }).publicKey.export({
          type: "spki",
          format: "pem",
        }),
      ).trim();
    const rsa = pem("rsa", { modulusLength: 2048 });
    const p384 = pem("ec", { namedCurve: "secp384r1" });
    const ed = pem("ed25519");
    const accepts = (publicKey: string, algorithms: string[]) =>
      messages({ jwt: { ...noKeys, publicKey, algorithms } });
    expect(accepts(rsa, ["PS256"])).toEqual([]);
    expect(accepts(p384, ["ES256", "ES384"])).toEqual([]);
    expect(accepts(ed, ["EdDSA"])).toEqual([]);
    expect(accepts(p384, ["ES256"])).toEqual([
      "No key here verifies ES256: this is an EC P-384 key (for ES384), so every token would be refused. Paste the identity provider's signing key, or list the algorithm it signs with.",
    ]);
    expect(accepts(ed, ["RS256", "ES256"])[0]).toMatch(/this is an Ed25519 key \(for EdDSA\)/);
    expect(accepts(pem("x25519"), ["EdDSA"])[0]).toMatch(/which signs no JWT/);
    expect(accepts(pem("rsa", { modulusLength: 1024 }), ["RS256"])).toEqual([
      "This PEM is an RSA key of 1024 bits: JWTs need at least 2048 (check that its modulus n was pasted whole).",
    ]);
    // A set needs one key that fits, not all: identity providers publish keys of several kinds.
    expect(
      messages({ jwt: { ...jwt, jwks: { keys: [JWK, { kty: "RSA", n: "AQAB", e: "AQAB" }] } } }),
    ).toEqual([
      "Key 2 of the set (keys[1]) is an RSA key of 17 bits: JWTs need at least 2048 (check that its modulus n was pasted whole).",
    ]);
    expect(
      messages({
        jwt: { ...jwt, jwks: { keys: [JWK, { kty: "EC", crv: "P-256", x: "AA", y: "AA" }] } },
      })[0],
    ).toMatch(/^Key 2 of the set \(keys\[1\]\) is not a public key Node can read/);
  });

  it("says what each field takes when given another JSON type, never valibot's own words", () => {
    const { jwks: _jwks, ...noKeys } = jwt;
    const { issuer: _issuer, ...noIssuer } = jwt;
    const cases: [unknown, string][] = [
      [{ ipAllowlist: [10] }, 'Must be an address or CIDR in double quotes, such as "10.0.0.0/8".'],
      [{ jwt: { ...jwt, issuer: 5 } }, "Must be text, in double quotes."],
      [
        { jwt: { ...jwt, audience: 5 } },
        "Must be an audience in double quotes, or a list of them.",
      ],
      [
        { jwt: { ...jwt, algorithms: "ES256" } },
        'List the algorithms in a JSON array, such as ["RS256"].',
      ],
      // A list would pass as an object whose indexes are claim names.
      [
        { jwt: { ...jwt, requiredClaims: [["svc-a"]] } },
        'Must be a JSON object of claims and allowed values, such as {"sub": ["svc-a"]}.',
      ],
      [{ jwt: { ...noKeys, jwks: [] } }, 'Must be a list of keys: {"keys": [ … ]}.'],
      [{ hmac: true }, "Must be a JSON object."],
      [{ hmac: { skewSeconds: "300" } }, "Must be a whole number of seconds."],
      [{ hmac: { secret: "x" } }, "Unknown field (check the spelling)."],
      [{ jwt: noIssuer }, "Required."],
      [
        { accessProxy: { preset: "okta" } },
        "preset must be cloudflare-access, google-iap or trusted-header.",
      ],
    ];
    for (const [input, message] of cases)
      expect(messages(input), JSON.stringify(input)).toEqual([message]);
  });

  it("bounds what a policy lists: claims, allowed values, keys, audiences, addresses", () => {
    const many = (n: number, make: (i: number) => unknown) =>
      Array.from({ length: n }, (_, i) => make(i));
    const claims = Object.fromEntries(many(101, (i) => [`c${i}`, ["v"]]) as [string, string[]][]);
    expect(messages({ jwt: { ...jwt, requiredClaims: claims } })).toEqual([
      "At most 100 required claims.",
    ]);
    expect(
      messages({ jwt: { ...jwt, requiredClaims: { sub: many(1001, (i) => `s${i}`) } } }),
    ).toEqual(["At most 1000 allowed values."]);
    expect(messages({ jwt: { ...jwt, jwks: { keys: many(101, () => JWK) } } })).toEqual([
      "At most 100 keys.",
    ]);
    expect(messages({ jwt: { ...jwt, audience: many(1001, (i) => `a${i}`) } })).toEqual([
      "At most 1000 audiences.",
    ]);
    const allow = many(1001, (i) => `u${i}@acme.test`);
    expect(
      messages({ accessProxy: { preset: "trusted-header", trustedProxies: ["10.0.0.5"], allow } }),
    ).toEqual(["At most 1000 entries."]);
    expect(
      messages({
        jwt: { ...jwt, requiredClaims: Object.fromEntries([["sub", many(1000, String)]]) },
      }),
    ).toEqual([]);
  });
});
