import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type Database from "better-sqlite3";
import { CatalogService } from "../../src/catalog/catalog-service.js";
import { SecretBox } from "../../src/catalog/encryption.js";
import { type Clock, systemClock } from "../../src/clock/clock.js";
import { InvalidArgumentError, SluiceError, StoreUnavailableError } from "../../src/errors.js";
import {
  loadOrCreateSecretKey,
  loadSecretKey,
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
 * with the catalog, never later: a catalog without one was made with `SLUICE_SECRET_KEY`,
 * and opening it without that key is refused, except read-only). Every process that shares
 * the data directory must use the same key.
 *
 * @example
 * ```ts
 * const data = await openDataDir({ dataDir: "./.sluice-data", secretKey: process.env.SLUICE_SECRET_KEY });
 * await data.catalog.store.listAllPools();
 * data.close();
 * ```
 */
export async function openDataDir(options: {
  dataDir: string;
  secretKey?: string | undefined;
  clock?: Clock;
  /** False: a directory without `sluice.db` is an error, and nothing is created. Default true. */
  create?: boolean;
}): Promise<OpenDataDir> {
  const dataDir = resolve(options.dataDir);
  const create = options.create ?? true;
  checkDataDir(dataDir, create);
  const key = inDataDir(dataDir, SECRET_KEY_FILE, () =>
    secretKeyOf(dataDir, options.secretKey, create),
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
    // A reader without the key never decrypts: its stand-in key is not checked.
    if (key !== READ_ONLY_STAND_IN) {
      await checkSecretKey(
        catalog,
        options.secretKey ? SECRET_KEY_ENV : join(dataDir, SECRET_KEY_FILE),
        "this data directory",
      );
    }
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

/** The key of a read-only open that has none: it decrypts nothing, and is never stored. */
const READ_ONLY_STAND_IN = randomBytes(32);

/**
 * The secret key, created only with a fresh directory's catalog. A directory that holds a
 * catalog but no `secret.key` was set up with `SLUICE_SECRET_KEY`: a new key there would seal
 * new secrets under a key the servers do not have, so that is refused, and a read-only open
 * gets a stand-in key (it writes nothing, and reads no secret).
 */
function secretKeyOf(dataDir: string, secretKey: string | undefined, create: boolean): Buffer {
  const env = secretKey ? { [SECRET_KEY_ENV]: secretKey } : {};
  const existing = loadSecretKey({ env, dataDir });
  if (existing) return existing;
  if (!create) return READ_ONLY_STAND_IN;
  if (existsSync(join(dataDir, DATABASE_FILE))) {
    throw new InvalidArgumentError(
      `The data directory ${dataDir} holds a catalog but no ${SECRET_KEY_FILE}: its secrets are ` +
        `sealed with the key in ${SECRET_KEY_ENV}. Set ${SECRET_KEY_ENV} to that key (or put ` +
        `the ${SECRET_KEY_FILE} back).`,
    );
  }
  return loadOrCreateSecretKey({ env, dataDir });
}

/**
 * Refuses a data directory that holds no catalog yet, naming the flags to check: for a command
 * that works on a team, pool or user there, whose own "no such team" would hide a mistyped
 * `--data-dir`, and which must not leave a fresh empty catalog behind.
 *
 * @example
 * ```ts
 * requireCatalogIn("./.sluice-data"); // throws InvalidArgumentError when there is no sluice.db
 * ```
 */
export function requireCatalogIn(dataDir: string): void {
  checkDataDir(resolve(dataDir), false);
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
 *
 * @example
 * ```ts
 * await checkSecretKey(catalog, "SLUICE_SECRET_KEY", "this database");
 * ```
 */
export async function checkSecretKey(
  catalog: CatalogService,
  keySource: string,
  where: string,
): Promise<void> {
  const sealed = (await catalog.store.listAllPools()).find((pool) => pool.credential !== null);
  if (!sealed) return;
  try {
    catalog.decryptCredential(sealed);
  } catch {
    throw new InvalidArgumentError(
      `The secret key (${keySource}) cannot open the upstream credentials stored in ${where} ` +
        `(pool ${sealed.subdomain}): use the key they were sealed with.`,
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
