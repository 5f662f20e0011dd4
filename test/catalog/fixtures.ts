import { randomBytes } from "node:crypto";
import type { PoolInput } from "../../src/catalog/types.js";

/** A complete, valid pool input; override what a test is about. */
export function poolInput(overrides: Partial<PoolInput> = {}): PoolInput {
  return {
    name: "LLM",
    description: null,
    subdomain: "llm",
    backend: "http",
    origin: "https://api.example.test",
    maxConcurrent: 8,
    queueSize: 4,
    queueTimeoutMs: 20_000,
    rpm: null,
    requestTimeoutMs: 120_000,
    termMs: 30_000,
    renewIntervalMs: 10_000,
    adaptive: true,
    requireKey: true,
    allowAuthorizationHeader: false,
    credential: null,
    database: null,
    originSigning: false,
    readMethods: [],
    readPaths: null,
    callerPolicies: null,
    budgetId: null,
    reservedConcurrent: 0,
    metricsRetentionDays: 30,
    ...overrides,
  };
}

/** A fresh random 256-bit key for SecretBox. */
export function testSecretKey(): Buffer {
  return randomBytes(32);
}

/**
 * A pool "tokens" that admits only bearer JWTs (RS256, issuer `https://idp.example`, audience
 * `sluice`) checked against the key set at `jwksUrl`, without a pool key.
 */
export function jwtTokensPool(jwksUrl: string): PoolInput {
  return poolInput({
    subdomain: "tokens",
    requireKey: false,
    callerPolicies: {
      jwt: {
        header: "authorization",
        algorithms: ["RS256"],
        issuer: "https://idp.example",
        audience: "sluice",
        clockToleranceSeconds: 30,
        jwksUrl,
      },
    },
  });
}
