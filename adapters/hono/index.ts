export * from "./caller/index.js";
export * from "./control/index.js";
export { CLIENT_CLOSED_REQUEST, lockApiError, statusForError } from "./error-status.js";
export * from "./lock/index.js";
export type { OpenApiObject } from "./openapi.js";
export {
  componentSchemas,
  jsonContent,
  jsonResponse,
  pathParameter,
  queryParameters,
  schemaRef,
} from "./openapi.js";
export * from "./proxy/index.js";
export * from "./sql/index.js";
