import { type JwksNetwork, keySetFetch } from "./key-set-fetch.js";

type Jose = typeof import("jose");
type RemoteKeySet = ReturnType<Jose["createRemoteJWKSet"]>;
/** A key lookup for jose's `jwtVerify`. */
export type KeyLookup = (...args: Parameters<RemoteKeySet>) => ReturnType<RemoteKeySet>;

/** How long a JWKS URL may take to answer (headers and body), unless the app says otherwise. */
export const JWKS_TIMEOUT_MS = 5_000;
/** How long fetched keys are used before they are fetched again. */
export const JWKS_CACHE_MS = 10 * 60_000;
/**
 * After a failed fetch, how long tokens of that key set are refused at once, without a new
 * fetch: during an identity provider's outage callers get their 401 without each waiting out
 * the timeout, and the provider is asked once per interval, not once per request.
 */
export const JWKS_RETRY_AFTER_FAILURE_MS = 5_000;

/**
 * How an app fetches JWKS URLs: the timeout, which network they may be on, and where an
 * unreachable key set is reported.
 */
export interface KeySetOptions {
  /** Bound on one fetch of a key set; default {@link JWKS_TIMEOUT_MS}. */
  timeoutMs?: number | undefined;
  /**
   * `public` (the default): a URL whose host is, or resolves to, a private, loopback or
   * link-local address is refused like an unreachable set; `private` allows them.
   */
  network?: JwksNetwork | undefined;
  /** Refusals without a fetch after a failed one; default {@link JWKS_RETRY_AFTER_FAILURE_MS}. */
  retryAfterFailureMs?: number | undefined;
  /** Told once when a key set stops being fetchable (again after it was fetched anew). */
  onUnavailable?: ((error: KeySetUnavailableError) => void) | undefined;
}

/**
 * A JWKS URL that could not be fetched (timeout, refused connection, not 200, a redirect, a
 * private address on a public-only server, too large, not a key set). The token is refused
 * (401, fail closed); the operator is told once per outage. The message names the URL
 * without its query and the cause, never a token.
 *
 * @example
 * ```ts
 * new KeySetUnavailableError("https://idp.example/jwks.json?v=1", cause).message;
 * // "The JWKS at https://idp.example/jwks.json could not be fetched: timed out."
 * ```
 */
export class KeySetUnavailableError extends Error {
  readonly code = "jwks_unavailable";
  constructor(url: string, cause: unknown) {
    const where = new URL(url);
    super(`The JWKS at ${where.origin}${where.pathname} could not be fetched: ${why(cause)}.`, {
      cause,
    });
    this.name = "KeySetUnavailableError";
  }
}

/** The cause in a few words: jose's timeout, or fetch's message with the network error's code. */
function why(cause: unknown): string {
  const error = cause as { code?: unknown; message?: unknown; cause?: { code?: unknown } } | null;
  if (error?.code === "ERR_JWKS_TIMEOUT") return "timed out";
  const network = typeof error?.cause?.code === "string" ? ` (${error.cause.code})` : "";
  return `${String(error?.message ?? cause)}${network}`;
}

async function credentialsRefused(): Promise<never> {
  throw new Error("the URL holds a user or password (user:password@), which is never sent");
}

// jose's errors about a token's key when the set itself was fetched: not an outage.
const TOKEN_KEY_ERRORS = new Set(["ERR_JWKS_NO_MATCHING_KEY", "ERR_JWKS_MULTIPLE_MATCHING_KEYS"]);

interface Entry {
  set: RemoteKeySet;
  /** The last fetch failed and was reported: later failures of this outage are not. */
  failing: boolean;
  /** Until when (ms since the epoch) the last failure answers without a new fetch. */
  retryAt: number;
  lastFailure: KeySetUnavailableError | null;
}

// One fetched key set per URL and timeout per process: pools (and the Lock API and proxy
// apps) naming the same issuer share its cache and its outage report.
const entries = new Map<string, Entry>();

/**
 * The keys of a JWKS URL for jose's `jwtVerify`: fetched with a timeout through
 * `keySetFetch` (no private addresses unless `options.network` is `private`, no redirects,
 * at most `JWKS_MAX_BYTES`), cached for {@link JWKS_CACHE_MS}. A failed fetch rejects with
 * {@link KeySetUnavailableError} and is reported to `options.onUnavailable` once until the
 * set is fetched again; for `options.retryAfterFailureMs` after it, lookups reject with the
 * same error at once instead of fetching again.
 *
 * @example
 * ```ts
 * const keys = remoteKeySet(jose, "https://idp.example/jwks.json", { timeoutMs: 2000, network: "public", onUnavailable: console.error });
 * await jose.jwtVerify(token, keys, { algorithms: ["RS256"] });
 * ```
 */
export function remoteKeySet(library: Jose, url: string, options: KeySetOptions = {}): KeyLookup {
  const timeoutMs = options.timeoutMs ?? JWKS_TIMEOUT_MS;
  const network = options.network ?? "public";
  const retryAfterFailureMs = options.retryAfterFailureMs ?? JWKS_RETRY_AFTER_FAILURE_MS;
  const id = `${timeoutMs} ${network} ${retryAfterFailureMs} ${url}`;
  let entry = entries.get(id);
  if (!entry) {
    const where = new URL(url);
    // An older setting may hold a user or password (the schema refuses them now): fetch would
    // refuse it with a message quoting the whole URL, credentials and query, into the log.
    const set =
      where.username !== "" || where.password !== ""
        ? (credentialsRefused as unknown as RemoteKeySet)
        : library.createRemoteJWKSet(where, {
            timeoutDuration: timeoutMs,
            cacheMaxAge: JWKS_CACHE_MS,
            [library.customFetch]: keySetFetch(network),
          });
    entry = { set, failing: false, retryAt: 0, lastFailure: null };
    entries.set(id, entry);
  }
  const found = entry;
  return async (...args) => {
    if (found.lastFailure && Date.now() < found.retryAt) throw found.lastFailure;
    try {
      const key = await found.set(...args);
      found.failing = false;
      found.lastFailure = null;
      return key;
    } catch (error) {
      if (TOKEN_KEY_ERRORS.has(String((error as { code?: unknown } | null)?.code))) {
        found.failing = false;
        found.lastFailure = null;
        throw error;
      }
      const unavailable = new KeySetUnavailableError(url, error);
      found.lastFailure = unavailable;
      found.retryAt = Date.now() + retryAfterFailureMs;
      if (!found.failing) {
        found.failing = true;
        options.onUnavailable?.(unavailable);
      }
      throw unavailable;
    }
  };
}
