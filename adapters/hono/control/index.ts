export type { ApiTokenAuthenticator } from "./api-token-auth.js";
export {
  apiTokenAuth,
  authenticateRequest,
  parseBearerToken,
  requireAbility,
} from "./api-token-auth.js";
export type {
  ApiTokenVariables,
  ControlAppDeps,
  ControlEnv,
  ServerErrorReport,
} from "./control-env.js";
export { CONTROL_API_PREFIX, createControlApp } from "./create-control-app.js";
export { INTERNAL_ERROR_MESSAGE, validationErrorBody } from "./error-response.js";
export { PoolKeyNotFoundError } from "./errors.js";
export { buildControlOpenApiDocument, CONTROL_API_VERSION } from "./openapi-document.js";
export type { PoolKeyCreateRequest, PoolMetricsQuery } from "./request-schemas.js";
export { PoolKeyCreateRequestSchema, PoolMetricsQuerySchema } from "./request-schemas.js";
export type {
  BudgetResource,
  MeResponse,
  PoolBudgetResource,
  PoolKeyResource,
  PoolResource,
  TeamResource,
  UserResource,
  ValidationErrorBody,
} from "./resource-schemas.js";
export {
  BudgetSchema,
  ErrorSchema,
  MeResponseSchema,
  PoolKeySchema,
  PoolMetricsSummarySchema,
  PoolSchema,
  ValidationErrorSchema,
} from "./resource-schemas.js";
export {
  isoDateTime,
  serializeBudget,
  serializeMintedPoolKey,
  serializePool,
  serializePoolKey,
  serializeTeam,
  serializeUser,
} from "./serializers.js";
