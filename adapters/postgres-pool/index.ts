export { lazyPostgresPools } from "./lazy-postgres-pools.js";
export type { PostgresPoolsOptions } from "./postgres-pools.js";
export { PostgresPools } from "./postgres-pools.js";
export type {
  SqlBatch,
  SqlErrorFields,
  SqlField,
  SqlIsolation,
  SqlParam,
  SqlResult,
  SqlRunner,
  SqlStatement,
  SqlTarget,
} from "./types.js";
export { SqlStatementError, THROTTLE_STATES } from "./types.js";
