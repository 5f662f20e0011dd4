export { createSqliteAccessLog, SqliteAccessLogStore } from "./access-log-store.js";
export type {
  BackgroundCheckpointOptions,
  BackgroundCheckpoints,
  CheckpointResult,
} from "./background-checkpoints.js";
export { checkpointFreeWindow, startBackgroundCheckpoints } from "./background-checkpoints.js";
export { SqliteChangeMarker } from "./change-marker.js";
export type { OpenDatabaseOptions } from "./database.js";
export { migrate, openSluiceDatabase, schemaVersion } from "./database.js";
export type { Migration } from "./migrations.js";
export { LATEST_SCHEMA_VERSION, MIGRATIONS } from "./migrations.js";
export {
  decodeSecretKey,
  loadOrCreateSecretKey,
  loadSecretKey,
  SECRET_KEY_ENV,
  SECRET_KEY_FILE,
} from "./secret-key.js";
export { SqliteAuthStore } from "./sqlite-auth-store.js";
export type { SqliteCatalogStoreOptions } from "./sqlite-catalog-store.js";
export { SqliteCatalogStore } from "./sqlite-catalog-store.js";
export { translateSqliteError } from "./sqlite-errors.js";
export { SqliteMetricsStore } from "./sqlite-metrics-store.js";
