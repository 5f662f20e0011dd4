import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlApiHarness, type Json, startControlApi } from "./harness.js";

const CONTRACT_OPERATIONS: [method: string, path: string, success: string][] = [
  ["get", "/api/v1/me", "200"],
  ["get", "/api/v1/budgets", "200"],
  ["get", "/api/v1/budgets/{budget}", "200"],
  ["get", "/api/v1/budgets/{budget}/pools", "200"],
  ["get", "/api/v1/pools", "200"],
  ["get", "/api/v1/pools/{pool}", "200"],
  ["post", "/api/v1/pools/{pool}/keys", "201"],
  ["delete", "/api/v1/pools/{pool}/keys/{apiKey}", "200"],
  ["get", "/api/v1/pools/{pool}/metrics", "200"],
];

/** Every `$ref` value anywhere in a JSON value. */
function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found);
  else if (value && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) {
      if (key === "$ref" && typeof child === "string") found.push(child);
      else refsIn(child, found);
    }
  }
  return found;
}

function resolve(document: Json, ref: string): Json {
  expect(ref.startsWith("#/")).toBe(true);
  return ref
    .slice(2)
    .split("/")
    .reduce((node, part) => node?.[part], document);
}

describe("GET /api/v1/openapi.json", () => {
  let api: ControlApiHarness;
  let document: Json;

  beforeAll(async () => {
    api = await startControlApi("memory");
    const response = await api.call("GET", "/api/v1/openapi.json");
    expect(response.status).toBe(200);
    document = response.body;
  });
  afterAll(async () => {
    await api.close();
  });

  it("is served without authentication as an OpenAPI 3.1 document, version 1.0.0", async () => {
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.info).toMatchObject({ title: expect.any(String), version: "1.0.0" });
  });

  it("is valid against the OpenAPI 3.1 schema", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("names the server it is served by and the package's license", async () => {
    expect(document.servers).toEqual([{ url: api.baseUrl, description: expect.any(String) }]);
    expect(document.info.license).toEqual({ name: "MIT", identifier: "MIT" });
  });

  it("declares a 4xx for every operation, the document's own 406 included", async () => {
    for (const [path, item] of Object.entries(document.paths) as [string, Json][]) {
      for (const [method, operation] of Object.entries(item) as [string, Json][]) {
        const statuses = Object.keys(operation.responses);
        expect(
          statuses.some((status) => status.startsWith("4")),
          `${method} ${path}`,
        ).toBe(true);
      }
    }
    expect(document.paths["/api/v1/openapi.json"].get.responses["406"]).toEqual({
      $ref: "#/components/responses/NotAcceptable",
    });
  });

  it.each([
    ["text/html", 406],
    ["text/html, application/json;q=0", 406],
    ["application/json", 200],
    ["application/vnd.oai.openapi+json", 200],
    ["text/html, */*;q=0.8", 200],
    ["application/*", 200],
  ])("answers Accept: %s with %i", async (accept, status) => {
    const response = await api.call("GET", "/api/v1/openapi.json", { headers: { accept } });
    expect(response.status).toBe(status);
    if (status === 406) expect(response.body).toEqual({ message: expect.stringContaining("JSON") });
    else expect(response.body.openapi).toMatch(/^3\.1\./);
  });

  it("documents each error status key creation answers with over a socket", async () => {
    const documented = document.paths["/api/v1/pools/{pool}/keys"].post.responses;
    const token = await api.fullToken();
    const post = (rawBody: string, type?: string) =>
      api.call("POST", "/api/v1/pools/embed/keys", {
        token,
        rawBody,
        headers: type === undefined ? {} : { "content-type": type },
      });
    const answers = [
      await post("{", "application/json"),
      await post(JSON.stringify({ label: "x".repeat(20_000) }), "application/json"),
      await post('{"label":"x"}', "text/plain"),
      await post('{"access":"admin"}', "application/json"),
    ];
    expect(answers.map((response) => response.status)).toEqual([400, 413, 415, 422]);
    for (const { status } of answers) expect(documented[String(status)], `${status}`).toBeDefined();
    expect(documented["415"]).toEqual({ $ref: "#/components/responses/UnsupportedMediaType" });
  });

  it("documents the key list, an extension outside the contract, as keys:write metadata", async () => {
    const operation = document.paths["/api/v1/pools/{pool}/keys"].get;
    expect(operation["x-required-ability"]).toBe("keys:write");
    expect(Object.keys(operation.responses).sort()).toEqual(["200", "401", "403", "404"]);
    expect(operation.responses["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/PoolKeyListResponse",
    });
    expect(document.components.schemas.PoolKeyListResponse.properties.data).toEqual({
      type: "array",
      items: { $ref: "#/components/schemas/PoolKey" },
    });
  });

  it("declares bearer authentication for every contract operation", async () => {
    const schemes = document.components.securitySchemes;
    const [name] = Object.entries(schemes).find(
      ([, scheme]: [string, Json]) => scheme.type === "http" && scheme.scheme === "bearer",
    ) as [string, unknown];
    expect(document.security).toEqual([{ [name]: [] }]);
    for (const [method, path] of CONTRACT_OPERATIONS) {
      expect(document.paths[path][method].security).toBeUndefined();
    }
  });

  it.each(CONTRACT_OPERATIONS)(
    "documents %s %s with its success and error responses",
    (method, path, success) => {
      const operation = document.paths[path]?.[method];
      expect(operation).toBeDefined();
      expect(operation.responses[success].content["application/json"].schema).toBeDefined();
      expect(operation.responses["401"]).toBeDefined();
      if (path !== "/api/v1/me") expect(operation.responses["403"]).toBeDefined();
      for (const name of path.match(/\{(\w+)\}/g) ?? []) {
        const parameter = operation.parameters.find((p: Json) => `{${p.name}}` === name);
        expect(parameter).toMatchObject({ in: "path", required: true });
      }
    },
  );

  it("resolves every $ref", async () => {
    const refs = refsIn(document);
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs) expect(resolve(document, ref)).toBeDefined();
  });

  it("describes the key creation body with the contract's limits", async () => {
    const request = document.components.schemas.PoolKeyCreateRequest;
    const body = document.paths["/api/v1/pools/{pool}/keys"].post.requestBody;
    expect(body.required).toBe(false);
    expect(body.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/PoolKeyCreateRequest",
    });
    expect(request.required ?? []).toEqual([]);
    expect(JSON.stringify(request.properties.label)).toContain('"maxLength":60');
    expect(JSON.stringify(request.properties.expires_preset)).toContain('["none","1h","24h","7d"]');
    expect(JSON.stringify(request.properties.access)).toContain('["read","write"]');
    expect(JSON.stringify(request.properties.expires_at)).toContain('"format":"date-time"');
  });

  it("documents from and to as optional date-time query parameters of the metrics endpoint", async () => {
    const parameters = document.paths["/api/v1/pools/{pool}/metrics"].get.parameters;
    for (const name of ["from", "to"]) {
      expect(parameters.find((p: Json) => p.name === name)).toMatchObject({
        in: "query",
        required: false,
        schema: { type: "string", format: "date-time" },
      });
    }
  });

  it("documents the 422 body as {message, errors: {field: [messages]}}", async () => {
    const schema = document.components.schemas.ValidationError;
    expect(schema.required).toEqual(["message", "errors"]);
    expect(schema.properties.errors.additionalProperties).toEqual({
      type: "array",
      items: { type: "string" },
    });
  });

  it("describes exactly the fields the API sends", async () => {
    const token = await api.fullToken();
    const schemas = document.components.schemas;
    const minted = await api.call("POST", "/api/v1/pools/llm/keys", {
      token,
      json: { access: "read" },
    });
    const samples: [string, Record<string, unknown>][] = [
      ["MeResponse", (await api.call("GET", "/api/v1/me", { token })).body],
      ["Budget", (await api.call("GET", "/api/v1/budgets", { token })).body.data[0]],
      ["Pool", (await api.call("GET", "/api/v1/pools/llm", { token })).body.data],
      ["PoolKey", minted.body.data],
      ["PoolMetricsSummary", (await api.call("GET", "/api/v1/pools/llm/metrics", { token })).body],
    ];
    for (const [name, sample] of samples) {
      const schema = schemas[name];
      const documented = Object.keys(schema.properties);
      expect(documented).toEqual(expect.arrayContaining(Object.keys(sample)));
      expect(Object.keys(sample)).toEqual(expect.arrayContaining(schema.required));
    }
  });
});
