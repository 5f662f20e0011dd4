import { resolve } from "node:path";
import * as v from "valibot";
import { InvalidArgumentError } from "../../src/errors.js";
import { cidrIssue } from "../../src/policies/address-list.js";
import { JWKS_TIMEOUT_MS } from "../hono/caller/remote-key-sets.js";
import { BODY_TIMEOUT_MS } from "../hono/lock/request-body.js";
import { DEFAULT_KEY_PREFIX } from "../redis/keys.js";
import { DEFAULT_RESTORE_GRACE_MS } from "../redis/options.js";
import { decodeSecretKey } from "../sqlite/secret-key.js";
import { redisClusterNodes } from "./redis-cluster-config.js";

/**
 * Defaults of every server setting, documented once here and in `docs/cli.md`.
 * `baseUrl` defaults to `http://localhost:<port>` and `lockUrl` to `baseUrl`.
 */
export const SERVER_CONFIG_DEFAULTS = {
  host: "127.0.0.1",
  port: 8080,
  dataDir: "./.sluice-data",
  poolDomain: "pools.localhost",
  redisPrefix: DEFAULT_KEY_PREFIX,
  redisFailurePolicy: "closed",
  redisRestoreGraceMs: DEFAULT_RESTORE_GRACE_MS,
  metricsFlushMs: 5_000,
  catalogSyncMs: 1_000,
  shutdownGraceMs: 10_000,
  // As long as a Lock API body may take: a client is given the same time for its head.
  headersTimeoutMs: BODY_TIMEOUT_MS,
  keepAliveTimeoutMs: BODY_TIMEOUT_MS,
  corsOrigins: [] as readonly string[],
  trustedProxies: [] as readonly string[],
  jwksTimeoutMs: JWKS_TIMEOUT_MS,
  jwksNetwork: "public",
  logFormat: "text",
  logRequests: false,
  clientMetadataNetwork: "public",
} as const;

function wholeNumber(min: number, max: number) {
  const message = `must be a whole number from ${min} to ${max}`;
  return v.pipe(
    v.union([v.number(), v.string()], message),
    // Flags and env vars arrive as text; only plain digit strings count as numbers.
    v.transform((value) => {
      if (typeof value === "number") return value;
      return /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
    }),
    v.number(message),
    v.integer(message),
    v.minValue(min, message),
    v.maxValue(max, message),
  );
}

const httpUrl = v.pipe(
  v.string(),
  v.trim(),
  v.check((value) => {
    try {
      const protocol = new URL(value).protocol;
      return protocol === "http:" || protocol === "https:";
    } catch {
      return false;
    }
  }, "must be an http:// or https:// URL"),
  // A public URL carries no credentials (they would be printed in the start banner).
  v.check(
    (value) =>
      !URL.canParse(value) || (new URL(value).username === "" && new URL(value).password === ""),
    "must not contain a user name or password",
  ),
  // Routes are served at the root of the host: a path would be advertised, then answer 404.
  v.check((value) => {
    if (!URL.canParse(value)) return true;
    const url = new URL(value);
    return url.pathname.replace(/\/+$/, "") === "" && url.search === "" && url.hash === "";
  }, "must name the host only, without a path, query or fragment (Sluice serves its routes at the root; a proxy in front may strip a prefix)"),
  // A trailing slash would double up when paths are appended.
  v.transform((value) => value.replace(/\/+$/, "")),
);

/** `*`, or a web origin: http(s), host and optional port, nothing after (a `/` at most). */
function isWebOrigin(text: string): boolean {
  if (text === "*") return true;
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (
    (url.protocol === "http:" || url.protocol === "https:") &&
    url.username === "" &&
    url.password === "" &&
    url.pathname === "/" &&
    !text.includes("?") &&
    !text.includes("#")
  );
}

/** A comma-separated list (or an array) of web origins, normalised as browsers send them. */
const corsOrigins = v.pipe(
  v.union([v.string(), v.array(v.string())], "must be a comma-separated list of origins"),
  v.transform((value) =>
    (typeof value === "string" ? value.split(",") : value)
      .map((origin) => origin.trim())
      .filter((origin) => origin !== ""),
  ),
  v.check(
    (list) => list.every(isWebOrigin),
    (issue) =>
      `must list web origins such as https://app.example (scheme, host and port, no path), or *; ${JSON.stringify(
        withoutCredentials((issue.input as string[]).find((origin) => !isWebOrigin(origin)) ?? ""),
      )} is none`,
  ),
  v.transform((list): readonly string[] =>
    list.map((origin) => (origin === "*" ? origin : new URL(origin).origin)),
  ),
);

const hostName = v.pipe(
  v.string(),
  v.trim(),
  v.toLowerCase(),
  v.regex(
    /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/,
    "must be a DNS name such as pools.localhost",
  ),
);

function isSecretKey(text: string): boolean {
  try {
    decodeSecretKey(text, "SLUICE_SECRET_KEY");
    return true;
  } catch {
    return false;
  }
}

function isParsableRedisUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { hostname, port } = new URL(text);
  return hostname !== "" && (port === "" || (Number(port) >= 1 && Number(port) <= 65_535));
}

function hasDecodableUserinfo(text: string): boolean {
  const { username, password } = new URL(text);
  try {
    decodeURIComponent(username);
    decodeURIComponent(password);
    return true;
  } catch {
    return false;
  }
}

/**
 * `scheme://user:password@host…?password=…` → `scheme://***@host…?***`, also on text that
 * does not parse as a URL: config errors and start-up lines never show credentials (Redis
 * clients read a password from the query too, so the whole query is hidden).
 *
 * @example
 * ```ts
 * withoutCredentials("redis://:pw@10.0.0.5:6379/0"); // "redis://***@10.0.0.5:6379/0"
 * withoutCredentials("redis://10.0.0.5:6379/?password=pw"); // "redis://10.0.0.5:6379/?***"
 * ```
 */
export function withoutCredentials(text: string): string {
  // Greedy up to the last "@" of the authority, as URL parsers split it: a password may hold "@".
  const masked = text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#\s]*@/i, "$1***@");
  return masked.replace(/^([a-z][a-z0-9+.-]*:\/\/[^?#\s]*)\?[^#\s]*/i, "$1?***");
}

/** A comma-separated list (or an array) of CIDRs or addresses (IPv4 or IPv6). */
const cidrList = v.pipe(
  v.union([v.string(), v.array(v.string())], "must be a comma-separated list of CIDRs"),
  v.transform((value) =>
    (typeof value === "string" ? value.split(",") : value)
      .map((cidr) => cidr.trim())
      .filter((cidr) => cidr !== ""),
  ),
  v.check(
    (list) => list.every((cidr) => cidrIssue(cidr) === null),
    (issue) =>
      `must list CIDRs or addresses: ${cidrIssue((issue.input as string[]).find((cidr) => cidrIssue(cidr) !== null) ?? "") ?? ""}`,
  ),
  v.transform((list): readonly string[] => list),
);

/** A switch from a flag (`--log-requests` alone is "true"), an env var or code. */
const onOff = v.pipe(
  v.union([v.boolean(), v.string()], 'must be "true" or "false"'),
  v.transform((value) => {
    if (typeof value === "boolean") return value;
    const text = value.trim().toLowerCase();
    if (["true", "1", "yes", "on"].includes(text)) return true;
    if (["false", "0", "no", "off"].includes(text)) return false;
    return null;
  }),
  v.boolean('must be "true" or "false"'),
);

const nonEmpty = (message: string) => v.pipe(v.string(), v.trim(), v.minLength(1, message));

/**
 * The server configuration: one schema yields the type and its validation. Every field but
 * `secretKey`, `databaseUrl` and `redisUrl` has a default (see {@link SERVER_CONFIG_DEFAULTS}).
 *
 * - `host`, `port`: where the HTTP server listens (port 0 picks a free port).
 * - `dataDir`: holds `sluice.db` (catalog and metrics) and, unless `secretKey` is set, `secret.key`.
 * - `baseUrl`: public URL of the Control API; its host name routes requests to it.
 * - `lockUrl`: public URL of the Lock API (`/pools/{pool}/lock/...`); defaults to `baseUrl`.
 * - `poolDomain`: a pool is served at `<subdomain>.<poolDomain>`.
 * - `databaseUrl`: when set (`postgres://…`), the catalog, metrics and access log live in
 *   PostgreSQL, shared by a fleet of servers, instead of `dataDir/sluice.db`.
 * - `redisUrl`: when set, slots live in Redis (shared by several servers) instead of memory.
 * - `redisClusterNodes`: instead of `redisUrl`, nodes (`host:port`) of a Redis Cluster.
 * - `redisFailurePolicy`: `closed` refuses traffic while Redis is down, `open` admits it.
 * - `redisRestoreGraceMs`: after Redis came back without its data, how long a pool the
 *   server re-creates admits nobody new, so every server hands back the slots still in use.
 * - `redisPrefix`: start of every Redis key and channel (`sluice:`); deployments (or
 *   test runs) sharing one Redis need distinct prefixes, because budget ids repeat per catalog.
 * - `metricsFlushMs`, `catalogSyncMs`: how often metrics are saved and the catalog is re-read.
 * - `shutdownGraceMs`: how long in-flight requests may run after SIGINT/SIGTERM.
 * - `headersTimeoutMs`: how long a request's head may take to arrive (then 408);
 *   `keepAliveTimeoutMs`: how long an idle keep-alive connection stays open.
 * - `corsOrigins`: web origins (`https://app.example`, comma-separated in flags and env) whose
 *   pages may call the Lock API besides the server's own base and lock URLs; `*` admits any.
 * - `trustedProxies`: CIDRs of the proxies in front of Sluice (comma-separated in flags and
 *   env); a pool's `ipAllowlist` believes the `X-Forwarded-For` hop each of them appends
 *   (read from the right), and so do the sign-in and client-registration throttles. Default
 *   none. (The trusted-header access-proxy preset lists its own proxies.)
 * - `jwksTimeoutMs`: how long a JWT or access-proxy policy's JWKS URL may take to answer;
 *   then the token is refused (401) and the outage logged once.
 * - `jwksNetwork`: where those JWKS URLs may be fetched from: `public` (public addresses
 *   only: team admins choose the URLs, and must not make the server reach cloud metadata or
 *   its own network) or `private` (also private and loopback addresses: a key server inside
 *   the network, development). Redirects are never followed either way.
 * - `logFormat`: `text` (readable lines) or `json` (one object a line) for the server log,
 *   access lines and error lines.
 * - `logRequests`: one access line per request (method, host, path, status, duration, pool,
 *   request id); 5xx answers and origin failures are logged either way.
 * - `metricsToken`: when set, `GET /metrics` needs `Authorization: Bearer <token>` (never logged).
 * - `clientMetadataNetwork`: where the MCP authorization server may fetch a client's metadata
 *   document: `public` (https, public addresses only) or `private` (also http and private or
 *   loopback addresses: development, private networks).
 * - `secretKey`: key that encrypts upstream credentials at rest (never logged).
 */
export const ServerConfigSchema = v.pipe(
  v.object({
    host: v.optional(nonEmpty("must not be empty"), SERVER_CONFIG_DEFAULTS.host),
    port: v.optional(wholeNumber(0, 65_535), SERVER_CONFIG_DEFAULTS.port),
    dataDir: v.optional(
      v.pipe(
        nonEmpty("must not be empty"),
        v.transform((dir) => resolve(dir)),
      ),
      SERVER_CONFIG_DEFAULTS.dataDir,
    ),
    baseUrl: v.optional(httpUrl),
    lockUrl: v.optional(httpUrl),
    poolDomain: v.optional(hostName, SERVER_CONFIG_DEFAULTS.poolDomain),
    databaseUrl: v.optional(
      v.pipe(
        v.string(),
        v.trim(),
        v.regex(/^postgres(ql)?:\/\/\S+$/, "must be a postgres:// or postgresql:// URL"),
        v.check((text) => URL.canParse(text), "must be a valid URL"),
      ),
    ),
    redisUrl: v.optional(
      v.pipe(
        v.string(),
        v.trim(),
        v.regex(/^rediss?:\/\/\S+$/, "must be a redis:// or rediss:// URL"),
        // Caught here, named with its source, rather than as a bare "Invalid URL" at start.
        v.check(
          (text) => !/^rediss?:\/\/\S+$/.test(text) || isParsableRedisUrl(text),
          "must be a valid URL (host, and a port from 1 to 65535)",
        ),
        // The Redis client decodes the user and password itself and fails with "URI malformed".
        v.check(
          (text) => !isParsableRedisUrl(text) || hasDecodableUserinfo(text),
          "has a user or password that is not valid percent-encoding (write a literal % as %25)",
        ),
      ),
    ),
    redisClusterNodes: v.optional(redisClusterNodes),
    redisPrefix: v.optional(
      v.pipe(
        v.string(),
        v.trim(),
        // Braces would break the per-pool hash tags that keep a group in one Cluster slot.
        v.regex(
          /^[A-Za-z0-9._:-]{1,100}$/,
          "must be 1-100 letters, digits, '.', '_', ':' or '-' (no braces or spaces)",
        ),
      ),
      SERVER_CONFIG_DEFAULTS.redisPrefix,
    ),
    redisFailurePolicy: v.optional(
      v.picklist(["closed", "open"], 'must be "closed" or "open"'),
      SERVER_CONFIG_DEFAULTS.redisFailurePolicy,
    ),
    redisRestoreGraceMs: v.optional(
      wholeNumber(0, 600_000),
      SERVER_CONFIG_DEFAULTS.redisRestoreGraceMs,
    ),
    metricsFlushMs: v.optional(wholeNumber(10, 3_600_000), SERVER_CONFIG_DEFAULTS.metricsFlushMs),
    catalogSyncMs: v.optional(wholeNumber(10, 3_600_000), SERVER_CONFIG_DEFAULTS.catalogSyncMs),
    shutdownGraceMs: v.optional(wholeNumber(0, 600_000), SERVER_CONFIG_DEFAULTS.shutdownGraceMs),
    // At most Node's whole-request timeout (300 s), which must not be shorter.
    headersTimeoutMs: v.optional(
      wholeNumber(100, 300_000),
      SERVER_CONFIG_DEFAULTS.headersTimeoutMs,
    ),
    keepAliveTimeoutMs: v.optional(
      wholeNumber(100, 600_000),
      SERVER_CONFIG_DEFAULTS.keepAliveTimeoutMs,
    ),
    corsOrigins: v.optional(corsOrigins, SERVER_CONFIG_DEFAULTS.corsOrigins),
    trustedProxies: v.optional(cidrList, SERVER_CONFIG_DEFAULTS.trustedProxies),
    jwksTimeoutMs: v.optional(wholeNumber(100, 60_000), SERVER_CONFIG_DEFAULTS.jwksTimeoutMs),
    jwksNetwork: v.optional(
      v.picklist(["public", "private"], 'must be "public" or "private"'),
      SERVER_CONFIG_DEFAULTS.jwksNetwork,
    ),
    logFormat: v.optional(
      v.picklist(["text", "json"], 'must be "text" or "json"'),
      SERVER_CONFIG_DEFAULTS.logFormat,
    ),
    logRequests: v.optional(onOff, SERVER_CONFIG_DEFAULTS.logRequests),
    metricsToken: v.optional(
      v.pipe(
        v.string(),
        // Compared as given: spaces at either end would be lost on the way through a header.
        v.regex(/^[\x21-\x7e]{16,512}$/, "must be 16 to 512 printable characters without spaces"),
      ),
    ),
    clientMetadataNetwork: v.optional(
      v.picklist(["public", "private"], 'must be "public" or "private"'),
      SERVER_CONFIG_DEFAULTS.clientMetadataNetwork,
    ),
    secretKey: v.optional(
      v.pipe(
        v.string(),
        v.check(isSecretKey, "must be 32 random bytes in base64 (e.g. `openssl rand -base64 32`)"),
      ),
    ),
  }),
  // Slots live in one Redis or in one Redis Cluster.
  v.forward(
    v.partialCheck(
      [["redisUrl"], ["redisClusterNodes"]],
      (config) => config.redisUrl === undefined || config.redisClusterNodes === undefined,
      "give either --redis-url or --redis-cluster-nodes, not both",
    ),
    ["redisClusterNodes"],
  ),
  v.transform((config) => {
    const baseUrl = config.baseUrl ?? `http://localhost:${config.port}`;
    // dataDir is absolute after the transform above; the default string needs the same.
    return {
      ...config,
      dataDir: resolve(config.dataDir),
      baseUrl,
      lockUrl: config.lockUrl ?? baseUrl,
    };
  }),
);

/** The validated, frozen server configuration. */
export type ServerConfig = Readonly<v.InferOutput<typeof ServerConfigSchema>>;
/** Raw settings as they come from flags, env or code (strings or numbers). */
export type ServerConfigInput = v.InferInput<typeof ServerConfigSchema>;
/** The name of one server setting (`port`, `redisUrl`, ...). */
export type ServerConfigField = keyof ServerConfigInput;

/** The `SLUICE_*` environment variable and the CLI flag of each field. */
export const SERVER_CONFIG_SOURCES: Readonly<
  Record<ServerConfigField, { env: string; flag: string | null }>
> = {
  host: { env: "SLUICE_HOST", flag: "host" },
  port: { env: "SLUICE_PORT", flag: "port" },
  dataDir: { env: "SLUICE_DATA_DIR", flag: "data-dir" },
  baseUrl: { env: "SLUICE_BASE_URL", flag: "base-url" },
  lockUrl: { env: "SLUICE_LOCK_URL", flag: "lock-url" },
  poolDomain: { env: "SLUICE_POOL_DOMAIN", flag: "pool-domain" },
  databaseUrl: { env: "SLUICE_DATABASE_URL", flag: "database-url" },
  redisUrl: { env: "SLUICE_REDIS_URL", flag: "redis-url" },
  redisClusterNodes: { env: "SLUICE_REDIS_CLUSTER_NODES", flag: "redis-cluster-nodes" },
  redisPrefix: { env: "SLUICE_REDIS_PREFIX", flag: "redis-prefix" },
  redisFailurePolicy: { env: "SLUICE_REDIS_FAILURE_POLICY", flag: "redis-failure-policy" },
  redisRestoreGraceMs: {
    env: "SLUICE_REDIS_RESTORE_GRACE_MS",
    flag: "redis-restore-grace-ms",
  },
  metricsFlushMs: { env: "SLUICE_METRICS_FLUSH_MS", flag: "metrics-flush-ms" },
  catalogSyncMs: { env: "SLUICE_CATALOG_SYNC_MS", flag: "catalog-sync-ms" },
  shutdownGraceMs: { env: "SLUICE_SHUTDOWN_GRACE_MS", flag: "shutdown-grace-ms" },
  headersTimeoutMs: { env: "SLUICE_HEADERS_TIMEOUT_MS", flag: "headers-timeout-ms" },
  keepAliveTimeoutMs: { env: "SLUICE_KEEP_ALIVE_TIMEOUT_MS", flag: "keep-alive-timeout-ms" },
  corsOrigins: { env: "SLUICE_CORS_ORIGINS", flag: "cors-origins" },
  trustedProxies: { env: "SLUICE_TRUSTED_PROXIES", flag: "trusted-proxies" },
  jwksTimeoutMs: { env: "SLUICE_JWKS_TIMEOUT_MS", flag: "jwks-timeout-ms" },
  jwksNetwork: { env: "SLUICE_JWKS_NETWORK", flag: "jwks-network" },
  logFormat: { env: "SLUICE_LOG_FORMAT", flag: "log-format" },
  logRequests: { env: "SLUICE_LOG_REQUESTS", flag: "log-requests" },
  metricsToken: { env: "SLUICE_METRICS_TOKEN", flag: "metrics-token" },
  clientMetadataNetwork: {
    env: "SLUICE_CLIENT_METADATA_NETWORK",
    flag: "client-metadata-network",
  },
  // Never a flag: a secret on the command line shows up in `ps`.
  secretKey: { env: "SLUICE_SECRET_KEY", flag: null },
};

/** Where {@link loadServerConfig} reads settings from. */
export interface ServerConfigSources {
  /** Values from CLI flags (or code); they win over `env`. Undefined entries are ignored. */
  flags?: Partial<Record<ServerConfigField, string | number | boolean | undefined>>;
  /** Environment (`SLUICE_*`); empty values count as unset. Defaults to none. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Builds the server configuration: flags win over `SLUICE_*` env vars, which win over the
 * defaults. The result is frozen. Throws {@link InvalidArgumentError} whose issues name each
 * bad field and where its value came from.
 *
 * @example
 * ```ts
 * const config = loadServerConfig({ flags: { port: "0" }, env: process.env });
 * config.baseUrl; // "http://localhost:0"
 * ```
 */
export function loadServerConfig(sources: ServerConfigSources = {}): ServerConfig {
  const { input, origins } = collectInput(sources);
  const result = v.safeParse(ServerConfigSchema, input);
  if (result.success) return Object.freeze(result.output);
  const issues = result.issues.map((issue) => describeIssue(issue, input, origins));
  throw new InvalidArgumentError(`Invalid configuration:\n  ${issues.join("\n  ")}`, issues);
}

function collectInput(sources: ServerConfigSources) {
  const input: Record<string, string | number | boolean> = {};
  const origins: Record<string, string> = {};
  for (const field of Object.keys(SERVER_CONFIG_SOURCES) as ServerConfigField[]) {
    const { env, flag } = SERVER_CONFIG_SOURCES[field];
    const fromFlag = sources.flags?.[field];
    const fromEnv = sources.env?.[env];
    if (fromFlag !== undefined) {
      input[field] = fromFlag;
      origins[field] = flag ? `--${flag}` : field;
    } else if (fromEnv !== undefined && fromEnv !== "") {
      input[field] = fromEnv;
      origins[field] = env;
    }
  }
  return { input, origins };
}

function describeIssue(
  issue: v.BaseIssue<unknown>,
  input: Record<string, string | number | boolean>,
  origins: Record<string, string>,
): string {
  const field = v.getDotPath(issue) ?? "config";
  const details: string[] = [];
  // Show what the user typed (not the half-transformed value), but never a secret: no key,
  // and no password inside a URL.
  if (field !== "secretKey" && field !== "metricsToken" && field in input) {
    details.push(`got ${JSON.stringify(withoutCredentials(String(input[field])))}`);
  }
  if (origins[field]) details.push(`from ${origins[field]}`);
  return `${field}: ${issue.message}${details.length > 0 ? ` (${details.join(", ")})` : ""}`;
}
