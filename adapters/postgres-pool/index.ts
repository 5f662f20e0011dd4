// `sluice/postgres` is this file (tsup.config.ts), and docs/postgres.md opens a fleet's catalog
// from it: the PostgreSQL catalog stores share the subpath, the one entry that loads `pg`.
export * from "../postgres/index.js";
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
