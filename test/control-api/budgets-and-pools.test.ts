import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectErrorBody } from "./assertions.js";
import { type ControlApiHarness, startControlApi } from "./harness.js";

describe.each(["memory", "sqlite"] as const)("budgets and pools (%s store)", (kind) => {
  let api: ControlApiHarness;
  let token: string;

  beforeAll(async () => {
    api = await startControlApi(kind);
    token = await api.fullToken();
  });
  afterAll(async () => {
    await api.close();
  });

  function llmPoolResource() {
    return {
      id: api.acme.llm.id,
      name: "LLM",
      description: "Chat completions",
      subdomain: "llm",
      backend: "http",
      max_concurrent: 8,
      require_key: true,
      has_credential: true,
      budget: { id: api.acme.llmBudget.id, name: "LLM", reserved_concurrent: 10 },
    };
  }

  describe("GET /api/v1/budgets", () => {
    it("lists the team's budgets with member pools and unallocated capacity", async () => {
      const response = await api.call("GET", "/api/v1/budgets", { token });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        data: [
          {
            id: api.acme.llmBudget.id,
            name: "LLM",
            pool_ids: [api.acme.llm.id, api.acme.embed.id],
            origin_max_concurrent: 40,
            unallocated: 25,
          },
          {
            id: api.acme.emptyBudget.id,
            name: "Empty",
            pool_ids: [],
            origin_max_concurrent: null,
            unallocated: 0,
          },
        ],
      });
    });
  });

  describe("GET /api/v1/budgets/{budget}", () => {
    it("shows one budget wrapped in data", async () => {
      const response = await api.call("GET", `/api/v1/budgets/${api.acme.llmBudget.id}`, { token });
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({
        id: api.acme.llmBudget.id,
        name: "LLM",
        pool_ids: [api.acme.llm.id, api.acme.embed.id],
        origin_max_concurrent: 40,
        unallocated: 25,
      });
    });

    it.each(["999999", "abc", "1.5", "-1", "0", "01", "1e3", "99999999999999999999", "%20"])(
      "answers 404 for the unknown or non-numeric id %s",
      async (segment) => {
        expectErrorBody(await api.call("GET", `/api/v1/budgets/${segment}`, { token }), 404);
        expectErrorBody(await api.call("GET", `/api/v1/budgets/${segment}/pools`, { token }), 404);
      },
    );
  });

  describe("GET /api/v1/budgets/{budget}/pools", () => {
    it("lists the budget's pools with their budget membership", async () => {
      const response = await api.call("GET", `/api/v1/budgets/${api.acme.llmBudget.id}/pools`, {
        token,
      });
      expect(response.status).toBe(200);
      expect(response.body.data).toHaveLength(2);
      expect(response.body.data[0]).toEqual(llmPoolResource());
      expect(response.body.data[1]).toMatchObject({
        subdomain: "embed",
        budget: { id: api.acme.llmBudget.id, name: "LLM", reserved_concurrent: 5 },
      });
    });

    it("lists nothing for a budget without pools", async () => {
      const response = await api.call("GET", `/api/v1/budgets/${api.acme.emptyBudget.id}/pools`, {
        token,
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: [] });
    });
  });

  describe("GET /api/v1/pools", () => {
    it("lists every pool of the team, with or without a budget", async () => {
      const response = await api.call("GET", "/api/v1/pools", { token });
      expect(response.status).toBe(200);
      expect(response.body.data.map((pool: { subdomain: string }) => pool.subdomain)).toEqual([
        "llm",
        "embed",
        "open",
        "warehouse",
      ]);
      expect(response.body.data[0]).toEqual(llmPoolResource());
      expect(response.body.data[2]).toEqual({
        id: api.acme.open.id,
        name: "Open",
        description: null,
        subdomain: "open",
        backend: "http",
        max_concurrent: 8,
        require_key: false,
        has_credential: false,
        budget: null,
      });
      expect(response.body.data[3]).toMatchObject({ subdomain: "warehouse", backend: "postgres" });
    });

    it("never sends the upstream credential", async () => {
      const response = await api.call("GET", "/api/v1/pools", { token });
      expect(response.text).not.toContain("sk-upstream-secret");
    });
  });

  describe("GET /api/v1/pools/{pool}", () => {
    it("shows a pool by subdomain, wrapped in data", async () => {
      const response = await api.call("GET", "/api/v1/pools/llm", { token });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: llmPoolResource() });
    });

    it.each(["nope", "LLM", "llm.", "%2e%2e", "1"])("answers 404 for %s", async (segment) => {
      expectErrorBody(await api.call("GET", `/api/v1/pools/${segment}`, { token }), 404);
    });
  });
});
