import { ConflictError, InvalidArgumentError, StoreUnavailableError } from "../../src/errors.js";

/** Error codes of a server that cannot be reached or is going away (not a bad statement). */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EPIPE",
]);

/**
 * The Sluice error for a PostgreSQL failure, or the error itself: a unique violation, a
 * serialization failure or a deadlock is a ConflictError, a foreign-key violation an
 * InvalidArgumentError, and an unreachable server a StoreUnavailableError.
 *
 * @example
 * ```ts
 * throw translatePostgresError(error, "pool");
 * ```
 */
export function translatePostgresError(error: unknown, what: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "23505")
    return new ConflictError(`${what}: a record with that unique value exists.`);
  if (code === "23503") {
    return new InvalidArgumentError(`${what}: it refers to a record that does not exist.`);
  }
  if (code === "40001" || code === "40P01") {
    return new ConflictError(
      `${what}: someone else changed the same records at the same moment; nothing was saved, try again.`,
    );
  }
  const unavailable =
    (typeof code === "string" && (UNAVAILABLE_CODES.has(code) || code.startsWith("08"))) ||
    code === "57P01" ||
    /Connection terminated|connection timeout/i.test((error as Error | null)?.message ?? "");
  if (unavailable) {
    // The message reaches callers of the Lock API and the proxy, before any key is checked:
    // the driver's own ("connect ECONNREFUSED 10.0.0.7:5432") would name the database's
    // address to anyone. The code says enough; the cause, kept for the server log, says all.
    const reason =
      typeof code === "string"
        ? code
        : /timeout/i.test((error as Error).message)
          ? "connection timeout"
          : "connection lost";
    return new StoreUnavailableError(
      `${what}: the PostgreSQL catalog database is unavailable (${reason}).`,
      { cause: error },
    );
  }
  return error;
}

/**
 * Runs `work`, turning a PostgreSQL failure into its Sluice error (see
 * {@link translatePostgresError}); every PostgreSQL store's queries go through it.
 *
 * @example
 * ```ts
 * const { rows } = await translated("session", () => pool.query(sql, values));
 * ```
 */
export async function translated<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw translatePostgresError(error, what);
  }
}
