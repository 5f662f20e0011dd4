import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bodyText,
  contentType,
  extraHeaders,
  method,
  pathSegment,
  queryString,
} from "./arbitraries.js";
import { expectContractAnswer, faultLines, fuzzOptions } from "./contract.js";
import { type FuzzServer, type RawRequest, rawRequest, startFuzzServer } from "./harness.js";

let env: FuzzServer;
beforeAll(async () => {
  env = await startFuzzServer();
});
afterAll(() => env?.close());

/** Every Control API route, `{…}` marking a path parameter (checked against the OpenAPI document). */
const ROUTES: readonly (readonly [string, string])[] = [
  ["GET", "/api/v1/me"],
  ["GET", "/api/v1/budgets"],
  ["GET", "/api/v1/budgets/{budget}"],
  ["GET", "/api/v1/budgets/{budget}/pools"],
  ["GET", "/api/v1/pools"],
  ["GET", "/api/v1/pools/{pool}"],
  ["GET", "/api/v1/pools/{pool}/keys"],
  ["POST", "/api/v1/pools/{pool}/keys"],
  ["DELETE", "/api/v1/pools/{pool}/keys/{apiKey}"],
  ["GET", "/api/v1/pools/{pool}/metrics"],
  ["GET", "/api/v1/openapi.json"],
];
const QUERY_NAMES = ["from", "to", "limit", "cursor", "window", "expand", "pool", "budget"];
const KEY_FIELDS = ["label", "expires_preset", "access", "expires_at", "key"];

/** A real id most of the time, so the handler (not just the router) sees the odd input. */
const budgetSegment = fc.oneof(fc.constant("1"), pathSegment);
const poolSegment = fc.oneof(fc.constant("chat"), fc.constant("open"), pathSegment);

const requestArbitrary = fc
  .record({
    route: fc.constantFrom(...ROUTES),
    /** Mostly the route's own method, so the handler runs; sometimes any other. */
    method: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: method }),
    budget: budgetSegment,
    pool: poolSegment,
    apiKey: fc.oneof(fc.constant("1"), pathSegment),
    query: queryString(QUERY_NAMES),
    body: bodyText(KEY_FIELDS),
    contentType,
    headers: extraHeaders,
    auth: fc.constantFrom("token", "token", "token", "token", "token", "none", "junk", "basic"),
  })
  .map((r): RawRequest => {
    const [routeMethod, route] = r.route;
    const requestMethod = r.method ?? routeMethod;
    const path =
      route.replace("{budget}", r.budget).replace("{pool}", r.pool).replace("{apiKey}", r.apiKey) +
      r.query;
    const headers: Record<string, string | string[]> = { ...r.headers };
    if (r.contentType !== undefined) headers["content-type"] = r.contentType;
    if (r.auth === "token") headers.authorization = `Bearer ${env.apiToken}`;
    if (r.auth === "junk") headers.authorization = "Bearer slk_%ZZ\u00e9".replace("\u00e9", "x");
    if (r.auth === "basic") headers.authorization = "Basic Og==";
    const sendsBody = requestMethod !== "GET" && requestMethod !== "HEAD";
    return { method: requestMethod, path, headers, body: sendsBody ? r.body : undefined };
  });

describe("Control API under malformed input (property, real socket)", () => {
  it("lists the routes the OpenAPI document has", async () => {
    const answer = await rawRequest(env.port, {
      method: "GET",
      path: "/api/v1/openapi.json",
      headers: { authorization: `Bearer ${env.apiToken}` },
    });
    const documented = Object.keys((answer.json as { paths: object }).paths).sort();
    expect(documented).toEqual([...new Set(ROUTES.map(([, route]) => route))].sort());
  });

  it("answers every request with no 5xx, in {message}, within 5 s", async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArbitrary, async (request) => {
        const answer = await rawRequest(env.port, request);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        expectContractAnswer(request, answer, "control");
      }),
      fuzzOptions(800, 20261127),
    );
    // The fuzzer reached the handlers, not just the router's 405 and the auth check's 401.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(200);
    expect((statuses.get(400) ?? 0) + (statuses.get(422) ?? 0)).toBeGreaterThan(3);
    // Nothing it sent broke the server or its state: the token and the pool still work.
    const me = await rawRequest(env.port, {
      method: "GET",
      path: "/api/v1/pools/chat",
      headers: { authorization: `Bearer ${env.apiToken}` },
    });
    expect(me.status).toBe(200);
  });

  it("logged no fault while answering all of it", () => {
    expect(faultLines(env.logs)).toEqual([]);
  });
});
