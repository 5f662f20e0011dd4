/**
 * `sluice/postgres`: the catalog, metrics, access log, OAuth grants and dashboard sign-in in
 * PostgreSQL, for a fleet of Sluice servers sharing one database. Importing `sluice` alone never loads `pg`.
 *
 * @example
 * ```ts
 * import { openPostgresCatalog } from "sluice/postgres";
 * const { store } = await openPostgresCatalog({ url: "postgres://sluice@db/sluice" });
 * ```
 */
export type { PostgresChangeWatchOptions } from "./change-watch.js";
export { PostgresChangeWatch } from "./change-watch.js";
export type { ConnectPostgresOptions } from "./connect.js";
export { connectPostgres, describePostgresUrl } from "./connect.js";
export type { FleetServingLock, LockPostgresFleetOptions } from "./fleet-slot-lock.js";
export { lockPostgresFleet } from "./fleet-slot-lock.js";
export type { PostgresMigration } from "./migrations.js";
export { migratePostgres, POSTGRES_MIGRATIONS } from "./migrations.js";
export type { OpenPostgresCatalogOptions, PostgresCatalog } from "./open-postgres-catalog.js";
export { openPostgresCatalog } from "./open-postgres-catalog.js";
export { PostgresAccessLogStore } from "./postgres-access-log-store.js";
export { PostgresAuthStore } from "./postgres-auth-store.js";
export { PostgresCatalogStore } from "./postgres-catalog-store.js";
export { PostgresMetricsStore } from "./postgres-metrics-store.js";
export { PostgresOAuthStore } from "./postgres-oauth-store.js";
export type { SecretSealer } from "./secret-key-check.js";
export { holdsFleetSecretKey } from "./secret-key-check.js";
