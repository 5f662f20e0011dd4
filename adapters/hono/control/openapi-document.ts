import type { Ability } from "../../../src/catalog/types.js";
import {
  componentSchemas,
  jsonContent,
  jsonResponse,
  type OpenApiObject,
  pathParameter,
  queryParameters,
  schemaRef,
} from "../openapi.js";
import { PoolKeyCreateRequestSchema, PoolMetricsQuerySchema } from "./request-schemas.js";
import {
  BudgetListResponseSchema,
  BudgetResponseSchema,
  BudgetSchema,
  ErrorSchema,
  MeResponseSchema,
  MetricsRangeSchema,
  PoolBudgetSchema,
  PoolKeyListResponseSchema,
  PoolKeyResponseSchema,
  PoolKeySchema,
  PoolListResponseSchema,
  PoolMetricsSummarySchema,
  PoolResponseSchema,
  PoolSchema,
  TeamSchema,
  UserSchema,
  ValidationErrorSchema,
} from "./resource-schemas.js";

/** The Control API's version (contract section 9); the path prefix carries the major. */
export const CONTROL_API_VERSION = "1.0.0";

const BEARER_SCHEME = "bearerAuth";

type ErrorStatus = "400" | "401" | "403" | "404" | "406" | "413" | "415" | "422";

const ERROR_RESPONSES: Record<ErrorStatus, [name: string, description: string, schema: string]> = {
  "400": ["BadRequest", "The body is not valid JSON.", "Error"],
  "401": ["Unauthorized", "Missing, malformed, unknown, expired or revoked token.", "Error"],
  "403": ["Forbidden", "The token lacks the ability this endpoint requires.", "Error"],
  "404": [
    "NotFound",
    "No such resource in the token's organization (other organizations' resources are never revealed).",
    "Error",
  ],
  "406": [
    "NotAcceptable",
    "The Accept header admits no JSON (application/json, application/vnd.oai.openapi+json or a wildcard).",
    "Error",
  ],
  "413": ["PayloadTooLarge", "The body is larger than the server accepts.", "Error"],
  "415": [
    "UnsupportedMediaType",
    "A body was sent without Content-Type: application/json (an empty body needs none).",
    "Error",
  ],
  "422": [
    "ValidationFailed",
    "Invalid body or query: `errors` maps each field to its messages.",
    "ValidationError",
  ],
};

const poolParameter = pathParameter(
  "pool",
  { type: "string" },
  "The pool subdomain (the label in the pool's host name).",
);
const budgetParameter = pathParameter("budget", { type: "integer" }, "The budget id.");
const keyParameter = pathParameter("apiKey", { type: "integer" }, "The pool key id.");

interface OperationSpec {
  operationId: string;
  summary: string;
  /** null: any valid token. */
  ability: Ability | null;
  parameters?: OpenApiObject[];
  requestBody?: OpenApiObject;
  success: { status: string; description: string; schema: string };
  errors?: ErrorStatus[];
}

function operation(spec: OperationSpec): OpenApiObject {
  const responses: OpenApiObject = {
    [spec.success.status]: jsonResponse(spec.success.description, schemaRef(spec.success.schema)),
  };
  const errors: ErrorStatus[] = [
    "401",
    ...(spec.ability ? (["403"] as const) : []),
    ...(spec.errors ?? []),
  ];
  for (const status of errors) {
    responses[status] = { $ref: `#/components/responses/${ERROR_RESPONSES[status][0]}` };
  }
  const abilityNote = spec.ability
    ? `Requires the \`${spec.ability}\` ability.`
    : "Any valid token may call it.";
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: abilityNote,
    "x-required-ability": spec.ability,
    ...(spec.parameters ? { parameters: spec.parameters } : {}),
    ...(spec.requestBody ? { requestBody: spec.requestBody } : {}),
    responses,
  };
}

function errorResponseComponents(): OpenApiObject {
  const components: OpenApiObject = {};
  for (const [name, description, schema] of Object.values(ERROR_RESPONSES)) {
    components[name] = jsonResponse(description, schemaRef(schema));
  }
  return components;
}

function paths(): OpenApiObject {
  return {
    "/api/v1/me": {
      get: operation({
        operationId: "getMe",
        summary: "The token's user, organization and abilities.",
        ability: null,
        success: { status: "200", description: "The token's identity.", schema: "MeResponse" },
      }),
    },
    "/api/v1/budgets": {
      get: operation({
        operationId: "listBudgets",
        summary: "List the organization's capacity budgets.",
        ability: "budgets:read",
        success: { status: "200", description: "Every budget.", schema: "BudgetListResponse" },
      }),
    },
    "/api/v1/budgets/{budget}": {
      get: operation({
        operationId: "getBudget",
        summary: "Show a capacity budget.",
        ability: "budgets:read",
        parameters: [budgetParameter],
        success: { status: "200", description: "The budget.", schema: "BudgetResponse" },
        errors: ["404"],
      }),
    },
    "/api/v1/budgets/{budget}/pools": {
      get: operation({
        operationId: "listBudgetPools",
        summary: "List the pools of a capacity budget.",
        ability: "pools:read",
        parameters: [budgetParameter],
        success: { status: "200", description: "The budget's pools.", schema: "PoolListResponse" },
        errors: ["404"],
      }),
    },
    "/api/v1/pools": {
      get: operation({
        operationId: "listPools",
        summary: "List the pools granted to the token (every pool of the organization).",
        ability: "pools:read",
        success: { status: "200", description: "Every pool.", schema: "PoolListResponse" },
      }),
    },
    "/api/v1/pools/{pool}": {
      get: operation({
        operationId: "getPool",
        summary: "Show a pool.",
        ability: "pools:read",
        parameters: [poolParameter],
        success: { status: "200", description: "The pool.", schema: "PoolResponse" },
        errors: ["404"],
      }),
    },
    "/api/v1/pools/{pool}/keys": {
      get: operation({
        operationId: "listPoolKeys",
        summary:
          "List a pool's keys, revoked and expired ones included (an extension outside the contract's table). " +
          "Metadata only: never the key or its signing secret.",
        ability: "keys:write",
        parameters: [poolParameter],
        success: {
          status: "200",
          description: "Every key of the pool, oldest first.",
          schema: "PoolKeyListResponse",
        },
        errors: ["404"],
      }),
      post: operation({
        operationId: "createPoolKey",
        summary: "Mint a pool key. The plaintext key (and signing secret) is returned only here.",
        ability: "keys:write",
        parameters: [poolParameter],
        requestBody: { required: false, content: jsonContent(schemaRef("PoolKeyCreateRequest")) },
        success: {
          status: "201",
          description: "The new key, including `key` once.",
          schema: "PoolKeyResponse",
        },
        errors: ["400", "404", "413", "415", "422"],
      }),
    },
    "/api/v1/pools/{pool}/keys/{apiKey}": {
      delete: operation({
        operationId: "revokePoolKey",
        summary: "Revoke a pool key.",
        ability: "keys:write",
        parameters: [poolParameter, keyParameter],
        success: {
          status: "200",
          description: "The revoked key, with revoked_at set.",
          schema: "PoolKeyResponse",
        },
        errors: ["404"],
      }),
    },
    "/api/v1/pools/{pool}/metrics": {
      get: operation({
        operationId: "getPoolMetrics",
        summary: "Admit, queue and request counts of a pool over a range (not wrapped in data).",
        ability: "metrics:read",
        parameters: [poolParameter, ...queryParameters(PoolMetricsQuerySchema)],
        success: { status: "200", description: "The summary.", schema: "PoolMetricsSummary" },
        errors: ["404", "422"],
      }),
    },
    "/api/v1/openapi.json": {
      get: {
        operationId: "getOpenApiDocument",
        summary: "This document. No authentication.",
        security: [],
        responses: {
          "200": jsonResponse("The OpenAPI 3.1 document.", { type: "object" }),
          "406": { $ref: "#/components/responses/NotAcceptable" },
        },
      },
    },
  };
}

/**
 * Builds the Control API's OpenAPI 3.1 document from the valibot schemas that validate its
 * requests and type its responses. `serverUrl` is the URL the API is reached under (scheme,
 * host and port; the paths carry `/api/v1`); without it, `/`: the host that served the document.
 *
 * @example
 * ```ts
 * const document = buildControlOpenApiDocument("https://sluice.example.com");
 * Object.keys(document.paths); // ["/api/v1/me", "/api/v1/budgets", …]
 * ```
 */
export function buildControlOpenApiDocument(serverUrl = "/"): OpenApiObject {
  return {
    openapi: "3.1.0",
    info: {
      title: "Sluice Control API",
      version: CONTROL_API_VERSION,
      description:
        "Lists capacity budgets and pools, mints and revokes pool keys, and reports pool metrics. " +
        "Send `Authorization: Bearer <token>` and `Accept: application/json`.",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: serverUrl, description: "This Sluice server." }],
    security: [{ [BEARER_SCHEME]: [] }],
    paths: paths(),
    components: {
      securitySchemes: {
        [BEARER_SCHEME]: {
          type: "http",
          scheme: "bearer",
          description: "An organization API token; abilities apply per endpoint.",
        },
      },
      schemas: componentSchemas({
        User: UserSchema,
        Team: TeamSchema,
        MeResponse: MeResponseSchema,
        Budget: BudgetSchema,
        PoolBudget: PoolBudgetSchema,
        Pool: PoolSchema,
        PoolKey: PoolKeySchema,
        PoolKeyCreateRequest: PoolKeyCreateRequestSchema,
        MetricsRange: MetricsRangeSchema,
        PoolMetricsSummary: PoolMetricsSummarySchema,
        BudgetResponse: BudgetResponseSchema,
        BudgetListResponse: BudgetListResponseSchema,
        PoolResponse: PoolResponseSchema,
        PoolListResponse: PoolListResponseSchema,
        PoolKeyResponse: PoolKeyResponseSchema,
        PoolKeyListResponse: PoolKeyListResponseSchema,
        Error: ErrorSchema,
        ValidationError: ValidationErrorSchema,
      }),
      responses: errorResponseComponents(),
    },
  };
}
