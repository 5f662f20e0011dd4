export { CONNECTION_STRING_HEADER, stripConnectionString } from "./connection-string-header.js";
export type { SqlCall, SqlHandler, SqlHandlerDeps, SqlServing } from "./serve-sql.js";
export { createSqlHandler } from "./serve-sql.js";
export type { SqlBody, SqlOptions } from "./sql-request.js";
export {
  MAX_BATCH_STATEMENTS,
  parseSqlBody,
  SQL_BODY_LIMIT_BYTES,
  sqlOptions,
} from "./sql-request.js";
export { sqlErrorBody, sqlResultBody } from "./sql-response.js";
