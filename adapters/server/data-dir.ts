import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type Database from "better-sqlite3";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { type Clock, systemClock } from "../../src/clock/clock.js";
import { InvalidArgumentError, SluiceError, StoreUnavailableError } from "../../src/errors.js";
import {
  loadOrCreateSecretKey,
  openSluiceDatabase,
  SECRET_KEY_ENV,
  SECRET_KEY_FILE,
  SqliteCatalogStore,
} from "../sqlite/index.js";
import { SERVER_CONFIG_DEFAULTS } from "./config.js";

/** File name of the database inside the data directory. */
export const DATABASE_FILE = "sluice.db";

/** An open data directory: the database, and the catalog rules over it. */
export interface OpenDataDir {
  readonly dataDir: string;
  readonly database: Database.Database;
  readonly catalog: CatalogService;
  /** Closes the database. Safe to call twice. */
  close(): void;
}

/**
 * The data directory a command uses: `--data-dir`, else `SLUICE_DATA_DIR`, else
 * `./.sluice-data` — the same rule as `sluice serve`, so the CLI and the server meet.
 *
 * @example
 * ```ts
 * resolveDataDir(undefined, { SLUICE_DATA_DIR: "/var/lib/sluice" }); // "/var/lib/sluice"
 * ```
 */
export function resolveDataDir(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  // An empty --data-dir would resolve to the current directory: refuse it, as serve does.
  if (flag !== undefined && flag.trim() === "") {
    throw new InvalidArgumentError("--data-dir must not be empty.");
  }
  const fromEnv = env.SLUICE_DATA_DIR;
  return resolve(flag ?? (fromEnv ? fromEnv : SERVER_CONFIG_DEFAULTS.dataDir));
}

/**
 * Opens (creating when missing) `dataDir/sluice.db` and the secret key that encrypts stored
 * upstream credentials: `SLUICE_SECRET_KEY` when given, else `dataDir/secret.key` (created
 * on first use). Every process that shares the data directory must use the same key.
 *
 * @example
 * ```ts
 * const data = openDataDir({ dataDir: "./.sluice-data", secretKey: process.env.SLUICE_SECRET_KEY });
 * data.catalog.store.listAllPools();
 * data.close();
 * ```
 */
export function openDataDir(options: {
  dataDir: string;
  secretKey?: string | undefined;
  clock?: Clock;
  /** False: a directory without `sluice.db` is an error, and nothing is created. Default true. */
  create?: boolean;
}): OpenDataDir {
  const dataDir = resolve(options.dataDir);
  checkDataDir(dataDir, options.create ?? true);
  const key = inDataDir(dataDir, SECRET_KEY_FILE, () =>
    loadOrCreateSecretKey({
      env: options.secretKey ? { [SECRET_KEY_ENV]: options.secretKey } : {},
      dataDir,
    }),
  );
  const database = inDataDir(dataDir, DATABASE_FILE, () =>
    openSluiceDatabase(join(dataDir, DATABASE_FILE)),
  );
  const store = new SqliteCatalogStore({ database });
  const catalog = new CatalogService({
    store,
    secretBox: new SecretBox(key),
    clock: options.clock ?? systemClock,
  });
  try {
    checkSecretKey(catalog, options.secretKey ? SECRET_KEY_ENV : join(dataDir, SECRET_KEY_FILE));
  } catch (error) {
    database.close();
    throw error;
  }
  let closed = false;
  return {
    dataDir,
    database,
    catalog,
    close() {
      if (closed) return;
      closed = true;
      database.close();
    },
  };
}

/** Names the real problem before any file in the directory is blamed for it. */
function checkDataDir(dataDir: string, create: boolean): void {
  if (existsSync(dataDir) && !statSync(dataDir).isDirectory()) {
    throw new InvalidArgumentError(`The data directory ${dataDir} is a file, not a directory.`);
  }
  if (!create && !existsSync(join(dataDir, DATABASE_FILE))) {
    throw new InvalidArgumentError(
      `No Sluice data in ${dataDir} (no ${DATABASE_FILE} there). Check --data-dir or ` +
        'SLUICE_DATA_DIR, or create a team first with "sluice team create".',
    );
  }
}

/**
 * Refuses a secret key that cannot open the credentials already stored (a wrong
 * `SLUICE_SECRET_KEY`, or a `secret.key` from another directory): caught at open, with the
 * way out, instead of every call to such a pool failing later.
 */
function checkSecretKey(catalog: CatalogService, keySource: string): void {
  const sealed = catalog.store.listAllPools().find((pool) => pool.credential !== null);
  if (!sealed) return;
  try {
    catalog.decryptCredential(sealed);
  } catch {
    throw new InvalidArgumentError(
      `The secret key (${keySource}) cannot open the upstream credentials stored in this data ` +
        `directory (pool ${sealed.subdomain}): use the key they were sealed with.`,
    );
  }
}

/**
 * Runs one step of opening the data directory; a file-system or SQLite failure becomes a
 * `StoreUnavailableError` naming the directory and file it concerns ("not a directory",
 * "file is not a database" alone name nothing).
 */
function inDataDir<T>(dataDir: string, file: string, open: () => T): T {
  try {
    return open();
  } catch (error) {
    if (error instanceof SluiceError || !(error instanceof Error)) throw error;
    throw new StoreUnavailableError(`Data directory ${dataDir}, ${file}: ${error.message}`, {
      cause: error,
    });
  }
}
