import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_TOKEN_PREFIX } from "../../src/catalog/secrets.js";
import { expectErrorBody } from "./assertions.js";
import { type ControlApiHarness, startControlApi } from "./harness.js";

describe.each(["memory", "sqlite"] as const)("Control API authentication (%s store)", (kind) => {
  let api: ControlApiHarness;

  beforeAll(async () => {
    api = await startControlApi(kind);
  });
  afterAll(async () => {
    await api.close();
  });

  describe("GET /api/v1/me", () => {
    it("returns the token's user, team and abilities", async () => {
      const response = await api.call("GET", "/api/v1/me", { token: await api.fullToken() });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(response.body).toEqual({
        user: { id: api.acme.owner.id, name: "Ada", email: "ada@acme.test" },
        team: { id: api.acme.team.id, name: "Acme", slug: "acme" },
        abilities: ["budgets:read", "pools:read", "pools:write", "keys:write", "metrics:read"],
      });
    });

    it("needs only a valid token: a token with a single ability lists just that one", async () => {
      const token = await api.token("globex", ["metrics:read"]);
      const response = await api.call("GET", "/api/v1/me", { token });
      expect(response.status).toBe(200);
      expect(response.body.team).toEqual({
        id: api.globex.team.id,
        name: "Globex",
        slug: "globex",
      });
      expect(response.body.abilities).toEqual(["metrics:read"]);
    });

    it("accepts the scheme word in any case", async () => {
      const token = await api.fullToken();
      const response = await api.call("GET", "/api/v1/me", {
        headers: { authorization: `bearer ${token}` },
      });
      expect(response.status).toBe(200);
    });
  });

  describe("401 for missing or invalid tokens", () => {
    const wellFormedUnknown = `${API_TOKEN_PREFIX}${"A".repeat(43)}`;
    const cases: [string, Record<string, string>][] = [
      ["no Authorization header", {}],
      ["an empty Authorization header", { authorization: "" }],
      ["another scheme", { authorization: "Basic YWRhOnNlY3JldA==" }],
      ["the scheme without a token", { authorization: "Bearer" }],
      ["two tokens", { authorization: `Bearer ${wellFormedUnknown} extra` }],
      ["a malformed token", { authorization: "Bearer not-a-token" }],
      ["a well-formed unknown token", { authorization: `Bearer ${wellFormedUnknown}` }],
    ];

    it.each(cases)("refuses %s", async (_case, headers) => {
      const response = await api.call("GET", "/api/v1/me", { headers });
      expectErrorBody(response, 401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    });

    it("refuses a revoked token", async () => {
      const created = await api.catalog.createApiToken({
        teamId: api.acme.team.id,
        actorUserId: api.acme.owner.id,
        name: "to revoke",
        abilities: ["pools:read"],
        lifetime: "1m",
      });
      expect((await api.call("GET", "/api/v1/me", { token: created.plaintext })).status).toBe(200);
      await api.catalog.revokeApiToken({
        teamId: api.acme.team.id,
        actorUserId: api.acme.owner.id,
        tokenId: created.token.id,
      });
      expectErrorBody(await api.call("GET", "/api/v1/me", { token: created.plaintext }), 401);
    });

    it("refuses the token of a user no longer in the team, on every endpoint", async () => {
      const leaver = (
        await api.catalog.addMember(
          api.acme.team.id,
          { name: "Lee", email: `lee-${kind}@acme.test` },
          "admin",
        )
      ).user;
      const { plaintext } = await api.catalog.createApiToken({
        teamId: api.acme.team.id,
        actorUserId: leaver.id,
        name: "leaver's",
        abilities: ["pools:read", "budgets:read"],
        lifetime: "1y",
      });
      expect((await api.call("GET", "/api/v1/me", { token: plaintext })).status).toBe(200);
      expect((await api.call("GET", "/api/v1/pools", { token: plaintext })).status).toBe(200);
      // The membership alone goes, the token stays unrevoked: the token check must refuse it.
      expect(await api.store.removeMembership(api.acme.team.id, leaver.id)).toBe(true);
      expectErrorBody(await api.call("GET", "/api/v1/me", { token: plaintext }), 401);
      expectErrorBody(await api.call("GET", "/api/v1/pools", { token: plaintext }), 401);
      expectErrorBody(await api.call("GET", "/api/v1/budgets", { token: plaintext }), 401);
    });

    it("never echoes the presented token", async () => {
      const response = await api.call("GET", "/api/v1/me", {
        headers: { authorization: `Bearer ${wellFormedUnknown}` },
      });
      expect(response.text).not.toContain(wellFormedUnknown);
    });
  });

  describe("routing", () => {
    it("answers 404 {message} for unknown routes, with or without a token", async () => {
      expectErrorBody(await api.call("GET", "/api/v1/nope", { token: await api.fullToken() }), 404);
      expectErrorBody(await api.call("GET", "/api/v1/nope"), 404);
      expectErrorBody(await api.call("GET", "/"), 404);
      expectErrorBody(await api.call("GET", "/api/v2/me", { token: await api.fullToken() }), 404);
    });

    it("answers 405 with Allow for a wrong method on a known path, token or not", async () => {
      for (const [method, path, allow, use] of [
        ["PUT", "/api/v1/pools", "GET, HEAD", "GET or HEAD"],
        ["DELETE", "/api/v1/me", "GET, HEAD", "GET or HEAD"],
        ["PUT", "/api/v1/pools/llm/keys", "GET, HEAD, POST", "GET, HEAD or POST"],
        ["POST", "/api/v1/pools/llm/keys/12", "DELETE", "DELETE"],
      ] as const) {
        for (const token of [await api.fullToken(), undefined]) {
          const response = await api.call(method, path, { token });
          expect(response.status).toBe(405);
          expect(response.headers.get("allow")).toBe(allow);
          expect(response.body).toEqual({
            message: `${method} is not allowed here; use ${use}.`,
          });
        }
      }
      // Paths no route has stay 404.
      expectErrorBody(await api.call("PUT", "/api/v1/pools/llm/keys/12/x"), 404);
    });

    it("marks responses as not cacheable", async () => {
      const response = await api.call("GET", "/api/v1/me", { token: await api.fullToken() });
      expect(response.headers.get("cache-control")).toBe("no-store");
    });
  });
});

describe("Control API token expiry", () => {
  it("refuses a token from its expiry instant on (manual clock)", async () => {
    const api = await startControlApi("memory");
    try {
      const created = await api.catalog.createApiToken({
        teamId: api.acme.team.id,
        actorUserId: api.acme.owner.id,
        name: "monthly",
        abilities: ["pools:read"],
        lifetime: "1m",
      });
      const untilExpiry = created.token.expiresAt - api.clock.now();
      api.clock.advanceSync(untilExpiry - 1);
      expect((await api.call("GET", "/api/v1/pools", { token: created.plaintext })).status).toBe(
        200,
      );
      api.clock.advanceSync(1);
      const expired = await api.call("GET", "/api/v1/pools", { token: created.plaintext });
      expectErrorBody(expired, 401);
      expect(expired.body.message).toMatch(/expired/i);
    } finally {
      await api.close();
    }
  });
});
