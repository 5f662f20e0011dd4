import type { PoolInput } from "../../src/catalog/types.js";

/**
 * A complete catalog pool input with small, explicit limits; override what a test is about.
 *
 * @example
 * ```ts
 * store.upsertPool(team.id, poolInput("chat", { maxConcurrent: 1 }));
 * ```
 */
export function poolInput(subdomain: string, overrides: Partial<PoolInput> = {}): PoolInput {
  return {
    name: subdomain,
    description: null,
    subdomain,
    backend: "http",
    origin: "http://127.0.0.1:9",
    maxConcurrent: 3,
    queueSize: 0,
    queueTimeoutMs: 30_000,
    rpm: null,
    requestTimeoutMs: 300_000,
    termMs: 30_000,
    renewIntervalMs: 10_000,
    adaptive: false,
    requireKey: true,
    allowAuthorizationHeader: true,
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
