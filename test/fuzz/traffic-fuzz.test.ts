import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bodyText,
  contentType,
  extraHeaders,
  method,
  oddNumberText,
  pathSegment,
  queryString,
  rawJsonValue,
} from "./arbitraries.js";
import { describeRequest, expectContractAnswer, faultLines, fuzzOptions } from "./contract.js";
import { type FuzzServer, type RawRequest, rawRequest, startFuzzServer } from "./harness.js";

let env: FuzzServer;
beforeAll(async () => {
  env = await startFuzzServer({ withPostgres: true });
});
afterAll(() => env?.close());

const RELEASE_FIELDS = ["waitMs", "status", "throttled", "retryAfterMs", "rate", "headers"];

/** A pool key where the Lock API and the proxy take one, or a wrong one, or none. */
function keyHeaders(key: string): fc.Arbitrary<Record<string, string>> {
  return fc.constantFrom<Record<string, string>>(
    { authorization: `Bearer ${key}` },
    { authorization: `Bearer ${key}` },
    { "x-svc-key": key },
    { "x-svc-key": key, authorization: "Bearer other" },
    { authorization: `Service ${key}` },
    {},
    { "x-svc-key": "slk_%ZZ" },
  );
}

const headerNumber = fc.oneof(
  oddNumberText,
  fc.constantFrom("true", "false", "", " 1 ", "1,2", "0x10"),
);

/** A segment that stays a segment: `..` and `%2e%2e` are resolved away by URL parsing (RFC 3986). */
const lockSegment = pathSegment.filter((segment) => !/^(\.|%2e){1,2}$/i.test(segment));

const lockRequest = fc
  .record({
    pool: fc.oneof(fc.constantFrom("chat", "chat", "open"), lockSegment),
    op: fc.constantFrom("acquire", "renew", "release"),
    slot: fc.oneof(fc.uuid(), lockSegment),
    method: fc.oneof(
      { weight: 5, arbitrary: fc.constant("POST") },
      { weight: 1, arbitrary: method },
    ),
    query: queryString(["waitMs", "pool", "slot"]),
    key: keyHeaders("KEY"),
    queueTimeout: fc.option(headerNumber, { nil: undefined }),
    noQueue: fc.option(headerNumber, { nil: undefined }),
    contentType,
    headers: extraHeaders,
    body: bodyText(RELEASE_FIELDS),
  })
  .map((r): RawRequest => {
    const path =
      r.op === "acquire"
        ? `/pools/${r.pool}/lock/acquire${r.query}`
        : `/pools/${r.pool}/lock/${r.slot}/${r.op}${r.query}`;
    const headers: Record<string, string | string[]> = { ...r.headers };
    for (const [name, value] of Object.entries(r.key))
      headers[name] = value.replace("KEY", env.poolKey);
    if (r.contentType !== undefined) headers["content-type"] = r.contentType;
    if (r.queueTimeout !== undefined) headers["x-svc-queue-timeout-ms"] = r.queueTimeout;
    if (r.noQueue !== undefined) headers["x-svc-no-queue"] = r.noQueue;
    const sendsBody = r.method !== "GET" && r.method !== "HEAD";
    return { method: r.method, path, headers, body: sendsBody ? r.body : undefined };
  });

const SQL_TEXT = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("SELECT $1::text AS v", "SELECT id, name FROM items") },
  fc.constantFrom(
    "SELECT $1::text AS v",
    "SELECT $1::int AS v",
    "SELECT $1::int[] AS v",
    "SELECT id, name FROM items",
    "SELECT 1/0",
    "SELECT",
    "COMMIT",
    "BEGIN",
    "SELECT 'a\u0000b'",
    "",
    "INSERT INTO items VALUES (9, 'x')",
  ),
  fc.string({ maxLength: 40 }),
);
const sqlParams = fc.oneof(
  fc
    .array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { minLength: 1, maxLength: 2 })
    .map((values) => JSON.stringify(values)),
  fc.array(rawJsonValue, { maxLength: 4 }).map((values) => `[${values.join(",")}]`),
  rawJsonValue,
  fc.integer({ min: 1, max: 8 }).map((depth) => `${"[".repeat(depth)}1${"]".repeat(depth)}`),
);
const sqlStatement = fc
  .tuple(SQL_TEXT, fc.option(sqlParams, { nil: undefined }))
  .map(
    ([query, params]) =>
      `{"query":${JSON.stringify(query)}${params === undefined ? "" : `,"params":${params}`}}`,
  );
const sqlBody = fc.oneof(
  { weight: 4, arbitrary: sqlStatement },
  {
    weight: 2,
    arbitrary: fc
      .array(sqlStatement, { maxLength: 4 })
      .map((statements) => `{"queries":[${statements.join(",")}]}`),
  },
  { weight: 2, arbitrary: bodyText(["query", "params", "queries", "arrayMode", "fullResults"]) },
);

const sqlRequest = fc
  .record({
    path: fc.oneof(
      { weight: 6, arbitrary: fc.constant("/sql") },
      { weight: 1, arbitrary: pathSegment.map((s) => `/${s}`) },
    ),
    method: fc.oneof(
      { weight: 6, arbitrary: fc.constant("POST") },
      { weight: 1, arbitrary: method },
    ),
    key: keyHeaders("KEY"),
    body: sqlBody,
    contentType,
    neon: fc.oneof(
      { weight: 3, arbitrary: fc.constant({}) },
      {
        weight: 1,
        arbitrary: fc.dictionary(
          fc.constantFrom(
            "neon-array-mode",
            "neon-raw-text-output",
            "neon-batch-isolation-level",
            "neon-batch-deferrable",
            "neon-batch-read-only",
            "neon-connection-string",
          ),
          fc.constantFrom("true", "false", "TRUE", "1", "", "Serializable", "ReadUncommitted", "x"),
          { maxKeys: 3 },
        ),
      },
    ),
  })
  .map((r): RawRequest => {
    const headers: Record<string, string> = { host: "warehouse.pools.localhost", ...r.neon };
    for (const [name, value] of Object.entries(r.key))
      headers[name] = value.replace("KEY", env.warehouseKey ?? "");
    if (r.contentType !== undefined) headers["content-type"] = r.contentType;
    const sendsBody = r.method !== "GET" && r.method !== "HEAD";
    return { method: r.method, path: r.path, headers, body: sendsBody ? r.body : undefined };
  });

const proxyRequest = fc
  .record({
    host: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom("chat.pools.localhost", "open.pools.localhost") },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          "CHAT.Pools.LocalHost",
          "chat.pools.localhost:99999",
          "chat.pools.localhost.",
          "a..pools.localhost",
          "[::1",
          "%ZZ.pools.localhost",
          `${"x".repeat(300)}.pools.localhost`,
          "nope.pools.localhost",
          "",
        ),
      },
    ),
    segments: fc.array(pathSegment, { maxLength: 3 }),
    query: queryString(["a", "key", "x-svc-key"]),
    method,
    key: keyHeaders("KEY"),
    contentType,
    headers: extraHeaders,
    body: bodyText(["a"]),
  })
  .map((r): RawRequest => {
    const headers: Record<string, string | string[]> = { ...r.headers, host: r.host };
    for (const [name, value] of Object.entries(r.key))
      headers[name] = value.replace("KEY", env.poolKey);
    if (r.contentType !== undefined) headers["content-type"] = r.contentType;
    const sendsBody = r.method !== "GET" && r.method !== "HEAD";
    return {
      method: r.method,
      path: `/${r.segments.join("/")}${r.query}`,
      headers,
      body: sendsBody ? r.body : undefined,
    };
  });

/** Counts answers by status, to check the fuzzer reached the handlers and not just the router. */
function tally(): { add(status: number): void; count(status: number): number } {
  const statuses = new Map<number, number>();
  return {
    add: (status) => statuses.set(status, (statuses.get(status) ?? 0) + 1),
    count: (status) => statuses.get(status) ?? 0,
  };
}

describe("Lock API, POST /sql and the pool proxy under malformed input (property, real socket)", () => {
  it("Lock API: no 5xx, {error, message} on every refusal, no slot leaked", async () => {
    const statuses = tally();
    await fc.assert(
      fc.asyncProperty(lockRequest, async (request) => {
        const answer = await rawRequest(env.port, request);
        statuses.add(answer.status);
        expectContractAnswer(request, answer, "lock");
        const slotId = (answer.json as { slotId?: unknown } | undefined)?.slotId;
        const pool = request.path.split("/")[2] as string;
        // Give a granted slot back, so later acquires reach the handler rather than a full pool.
        if (typeof slotId === "string") await env.server.governor.release(pool, slotId);
      }),
      fuzzOptions(500, 20261127),
    );
    expect((await env.server.governor.status("chat")).held).toBe(0);
    expect((await env.server.governor.status("open")).held).toBe(0);
    // Slots were granted and bodies refused: the handlers ran, not only the key check.
    expect(statuses.count(200)).toBeGreaterThan(2);
    expect(statuses.count(400)).toBeGreaterThan(5);
  });

  it("POST /sql: no 5xx; a database refusal is {message, code}, any other {error, message}", async (context) => {
    if (!env.hasPostgres) context.skip();
    const statuses = tally();
    await fc.assert(
      fc.asyncProperty(sqlRequest, async (request) => {
        const answer = await rawRequest(env.port, request);
        statuses.add(answer.status);
        const what = `${describeRequest(request)} → ${answer.status} ${answer.failure ?? answer.text.slice(0, 300)}`;
        expect(answer.failure, what).toBeUndefined();
        expect(answer.status, what).toBeLessThan(500);
        if (answer.status < 400 || request.method === "HEAD") return;
        const body = answer.json as Record<string, unknown> | undefined;
        expect(body?.message, what).toBeTypeOf("string");
        if (typeof body?.code !== "string") expect(body?.error, what).toBeTypeOf("string");
      }),
      fuzzOptions(300, 20261127),
    );
    expect((await env.server.governor.status("warehouse")).held).toBe(0);
    expect(statuses.count(200)).toBeGreaterThan(10);
    expect(statuses.count(400)).toBeGreaterThan(20);
  });

  it("pool proxy: no 5xx from Sluice itself, {error, message} on every refusal", async () => {
    const statuses = tally();
    await fc.assert(
      fc.asyncProperty(proxyRequest, async (request) => {
        const answer = await rawRequest(env.port, request);
        statuses.add(answer.status);
        // The origin answers 200 to everything, so any other answer is Sluice's own.
        expectContractAnswer(request, answer, answer.headers["x-svc-rejected-by"] ? "lock" : "any");
      }),
      fuzzOptions(400, 20261127),
    );
    expect((await env.server.governor.status("chat")).held).toBe(0);
    expect(statuses.count(200)).toBeGreaterThan(20);
  });

  it("logged no fault while answering all of it", () => {
    expect(faultLines(env.logs)).toEqual([]);
  });
});
