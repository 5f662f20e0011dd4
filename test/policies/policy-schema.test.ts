import * as v from "valibot";
import { describe, expect, it } from "vitest";
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
      "Must hold public keys only (no private or symmetric key).",
    ]);
    expect(
      messages({ jwt: { ...jwt, jwks: { keys: [{ kty: "oct", k: "c2VjcmV0" }] } } }),
    ).toHaveLength(1);
  });

  it("takes https key set URLs, and http only on localhost", () => {
    const { jwks: _jwks, ...noKeys } = jwt;
    expect(messages({ jwt: { ...noKeys, jwksUrl: "https://idp.example/jwks" } })).toEqual([]);
    expect(messages({ jwt: { ...noKeys, jwksUrl: "http://127.0.0.1:8000/jwks" } })).toEqual([]);
    expect(messages({ jwt: { ...noKeys, jwksUrl: "http://idp.example/jwks" } })).toEqual([
      "Must be an https:// URL (http:// only on localhost).",
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
});
