import { randomBytes } from "node:crypto";
import { linkSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { InvalidArgumentError } from "../../src/errors.js";
import { makeDirectory } from "./make-directory.js";

/** The environment variable that may hold the secret key (base64 of 32 bytes). */
export const SECRET_KEY_ENV = "SLUICE_SECRET_KEY";
/** The file in the data directory that holds the secret key when the environment does not. */
export const SECRET_KEY_FILE = "secret.key";
const KEY_BYTES = 32;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes a base64 (standard alphabet, padded) 32-byte key; throws InvalidArgumentError with
 * a message that names the source and never echoes the value.
 *
 * @example
 * ```ts
 * const key = decodeSecretKey(process.env.SLUICE_SECRET_KEY ?? "", "SLUICE_SECRET_KEY");
 * ```
 */
export function decodeSecretKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  const bytes = BASE64.test(trimmed) ? Buffer.from(trimmed, "base64") : null;
  if (!bytes || bytes.length !== KEY_BYTES) {
    throw new InvalidArgumentError(
      `${source} must be ${KEY_BYTES} random bytes in base64 (44 characters), for example the output of \`openssl rand -base64 32\`.`,
    );
  }
  return bytes;
}

/**
 * The 32-byte key of the SecretBox: `SLUICE_SECRET_KEY` (base64) when set, else
 * `<dataDir>/secret.key`, created on first start (mode 0600, directory 0700) and reused
 * afterwards. Losing the key makes stored upstream credentials and signing secrets
 * unreadable, so keep a copy somewhere safe, apart from database backups (a leaked backup
 * holding both would expose the secrets).
 *
 * @example
 * ```ts
 * const box = new SecretBox(loadOrCreateSecretKey({ env: process.env, dataDir: "./.sluice-data" }));
 * ```
 */
export function loadOrCreateSecretKey(options: {
  env: Record<string, string | undefined>;
  dataDir: string;
}): Buffer {
  const existing = loadSecretKey(options);
  if (existing) return existing;
  makeDirectory(options.dataDir, 0o700);
  const path = join(options.dataDir, SECRET_KEY_FILE);
  createKeyFile(path);
  return readKeyFile(path)!;
}

/**
 * The secret key from `SLUICE_SECRET_KEY` or `<dataDir>/secret.key`, like
 * {@link loadOrCreateSecretKey}, but undefined when neither holds one: nothing is created.
 *
 * @example
 * ```ts
 * const key = loadSecretKey({ env: process.env, dataDir: "./.sluice-data" }); // undefined: no key yet
 * ```
 */
export function loadSecretKey(options: {
  env: Record<string, string | undefined>;
  dataDir: string;
}): Buffer | undefined {
  const fromEnv = options.env[SECRET_KEY_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== "")
    return decodeSecretKey(fromEnv, SECRET_KEY_ENV);
  return readKeyFile(join(options.dataDir, SECRET_KEY_FILE));
}

function readKeyFile(path: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return decodeSecretKey(text, path);
}

/**
 * Writes the key beside its final name, then hard-links it into place: the link fails if the
 * file exists, so two processes starting at once both end up reading one key, and nobody can
 * read a half-written file.
 */
function createKeyFile(path: string): void {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(temporary, `${randomBytes(KEY_BYTES).toString("base64")}\n`, {
    mode: 0o600,
    flag: "wx",
  });
  try {
    linkSync(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    unlinkSync(temporary);
  }
}
