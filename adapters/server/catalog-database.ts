import { join } from "node:path";
import type Database from "better-sqlite3";
import type { AccessLogStore } from "../../src/access-log/types.js";
import type { AuthStore } from "../../src/auth/types.js";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { type Clock, systemClock } from "../../src/clock/clock.js";
import { InvalidArgumentError } from "../../src/errors.js";
import type { MetricsStore } from "../../src/metrics/metrics-store.js";
import type { OAuthStore } from "../oauth/types.js";
import { SqliteAccessLogStore } from "../sqlite/access-log-store.js";
import { startBackgroundCheckpoints } from "../sqlite/background-checkpoints.js";
import { openSluiceDatabase } from "../sqlite/database.js";
import { decodeSecretKey, SECRET_KEY_ENV } from "../sqlite/secret-key.js";
import { SqliteAuthStore } from "../sqlite/sqlite-auth-store.js";
import { SqliteMetricsStore } from "../sqlite/sqlite-metrics-store.js";
import { checkSecretKey, DATABASE_FILE, openDataDir } from "./data-dir.js";
import { KeylessSecretBox } from "./keyless-secret-box.js";

/**
 * Where the catalog, metrics, access log and dashboard sign-in live: SQLite in a data
 * directory, or PostgreSQL (shared by every server and CLI command given the same URL).
 */
export interface CatalogDatabase {
  readonly catalog: CatalogService;
  readonly metrics: MetricsStore;
  readonly accessLog: AccessLogStore;
  /** The data directory (SQLite), or null (PostgreSQL: nothing on this machine). */
  readonly dataDir: string | null;
  /** For the start-up log: the directory, or the database URL without its password. */
  readonly description: string;
  /** The MCP endpoint's OAuth store when it lives beside the catalog (PostgreSQL); else absent. */
  readonly oauth?: OAuthStore;
  /** The dashboard's passwords, sessions and sign-in links, beside the catalog. */
  readonly auth: AuthStore;
  /**
   * The SQLite database of this server's data directory. With a PostgreSQL catalog nothing
   * Sluice keeps is in it; it is opened only if an app asks for it (`ServerAppDeps.database`).
   */
  localDatabase(): Database.Database;
  /**
   * Calls `listener` as soon as any process changes the catalog, where the database tells
   * (PostgreSQL's NOTIFY); absent where only polling the change marker can (SQLite).
   */
  readonly onChange?: (listener: () => void) => () => void;
  /**
   * One round trip to the database, for `/readyz`, where reading the change marker makes none
   * (PostgreSQL: the marker is the version this process last saw, kept without I/O for the
   * request path, so it reads fine while the database is down); absent for SQLite, whose
   * marker is read from the file.
   */
  readonly ping?: () => Promise<void>;
  /** Closes the database. Safe to call twice. */
  close(): Promise<void>;
}

/** Options of {@link openCatalogDatabase}. */
export interface OpenCatalogDatabaseOptions {
  dataDir: string;
  /** `postgres://…`: the catalog lives there instead of `dataDir/sluice.db`. */
  databaseUrl?: string | undefined;
  secretKey?: string | undefined;
  clock?: Clock;
  /** False: only read (nothing is created; PostgreSQL then needs no secret key). Default true. */
  create?: boolean;
  /**
   * Whether a PostgreSQL catalog needs `secretKey` (something is sealed or opened: pool
   * credentials, signing secrets). Default: unless `create` is false. Without the key, any
   * seal or open fails ({@link KeylessSecretBox}).
   */
  needsSecretKey?: boolean;
  log?: (line: string) => void;
  /** How long to wait for a PostgreSQL that does not answer (ms); default: keep trying. */
  waitMs?: number;
  /**
   * SQLite: WAL checkpoints run in a worker thread instead of inside a commit (a server's
   * requests never wait for one); see {@link startBackgroundCheckpoints}. Default false.
   */
  backgroundCheckpoints?: boolean;
}

/**
 * Opens the catalog a server or CLI command uses: PostgreSQL when `databaseUrl` is given
 * (loaded only then, so a SQLite install never needs `pg`), else the data directory. A
 * PostgreSQL catalog is shared by a fleet, so its key must come from `SLUICE_SECRET_KEY`
 * (the same on every server), and a key that cannot open the stored credentials is refused.
 *
 * @example
 * ```ts
 * const db = await openCatalogDatabase({ dataDir, databaseUrl: process.env.SLUICE_DATABASE_URL });
 * await db.catalog.store.listAllPools();
 * await db.close();
 * ```
 */
export async function openCatalogDatabase(
  options: OpenCatalogDatabaseOptions,
): Promise<CatalogDatabase> {
  if (options.databaseUrl !== undefined) return openPostgres(options.databaseUrl, options);
  const data = await openDataDir({
    dataDir: options.dataDir,
    secretKey: options.secretKey,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.create === undefined ? {} : { create: options.create }),
  });
  const checkpoints = options.backgroundCheckpoints
    ? startBackgroundCheckpoints(data.database, {
        onError: (error) => options.log?.(`Background WAL checkpoints: ${error.message}`),
      })
    : null;
  return {
    catalog: data.catalog,
    metrics: new SqliteMetricsStore(data.database),
    accessLog: new SqliteAccessLogStore(data.database),
    auth: new SqliteAuthStore(data.database),
    dataDir: data.dataDir,
    description: `data directory ${data.dataDir}`,
    localDatabase: () => data.database,
    async close() {
      await checkpoints?.stop();
      data.close();
    },
  };
}

async function openPostgres(
  url: string,
  options: OpenCatalogDatabaseOptions,
): Promise<CatalogDatabase> {
  const needsKey = options.needsSecretKey ?? options.create !== false;
  if (!options.secretKey && needsKey) {
    throw new InvalidArgumentError(
      `A PostgreSQL catalog needs ${SECRET_KEY_ENV}: the key that seals upstream credentials, ` +
        "the same on every server of the fleet (create one with `openssl rand -base64 32`).",
    );
  }
  const keyBox = options.secretKey
    ? new SecretBox(decodeSecretKey(options.secretKey, SECRET_KEY_ENV))
    : null;
  const secretBox = keyBox ?? new KeylessSecretBox(SECRET_KEY_ENV);
  const { openPostgresCatalog, describePostgresUrl, holdsFleetSecretKey } = await import(
    "../postgres/index.js"
  );
  const clock = options.clock ?? systemClock;
  const opened = await openPostgresCatalog({
    url,
    clock,
    ...(options.log ? { log: options.log } : {}),
    ...(options.waitMs === undefined ? {} : { timeoutMs: options.waitMs }),
  });
  const catalog = new CatalogService({ store: opened.store, secretBox, clock });
  try {
    if (keyBox) {
      await checkSecretKey(catalog, SECRET_KEY_ENV, "this database");
      const record = options.create !== false;
      if (!(await holdsFleetSecretKey(opened.pool, keyBox, { record }))) {
        throw new InvalidArgumentError(
          `${SECRET_KEY_ENV} is not the key of this database's fleet: it cannot open the key ` +
            "check sealed by the first server or command that used the database. Give every " +
            `server and command of the fleet the same ${SECRET_KEY_ENV}.`,
        );
      }
    }
  } catch (error) {
    await opened.close();
    throw error;
  }
  let local: Database.Database | null = null;
  return {
    catalog,
    metrics: opened.metrics,
    accessLog: opened.accessLog,
    oauth: opened.oauth,
    auth: opened.auth,
    dataDir: null,
    description: `PostgreSQL ${describePostgresUrl(url)}`,
    onChange: (listener) => opened.onChange(listener),
    async ping() {
      await opened.pool.query("SELECT 1");
    },
    localDatabase() {
      local ??= openSluiceDatabase(join(options.dataDir, DATABASE_FILE));
      return local;
    },
    async close() {
      if (local?.open) local.close();
      await opened.close();
    },
  };
}
