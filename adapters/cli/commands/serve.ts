import { missingPackageError } from "../../packages/optional-package.js";
import { trustedProxiesWarning } from "../../server/broad-trusted-proxies.js";
import { describeSync } from "../../server/catalog-sync.js";
import {
  loadServerConfig,
  SERVER_CONFIG_DEFAULTS,
  SERVER_CONFIG_SOURCES,
  type ServerConfigField,
} from "../../server/config.js";
import type { ListenResult, SluiceServer } from "../../server/create-server.js";
import { createServerLog, type ServerLog } from "../../server/server-log.js";
import { recordServerUrl } from "../../server/server-url-file.js";
import {
  type CliIo,
  type CommandSpec,
  type OptionSpec,
  type ParsedCommand,
  PROCESS_SIGNALS,
  type SignalSource,
} from "../command.js";
import { printFirstSignInLinks } from "../first-sign-in.js";

type FlagField = Exclude<ServerConfigField, "secretKey">;

const FLAG_HELP: Record<FlagField, { placeholder?: string; description: string }> = {
  host: {
    placeholder: "<address>",
    description: `Interface to listen on. Default ${SERVER_CONFIG_DEFAULTS.host}.`,
  },
  port: {
    placeholder: "<port>",
    description: `Port to listen on; 0 picks a free one. Default ${SERVER_CONFIG_DEFAULTS.port}.`,
  },
  dataDir: {
    placeholder: "<dir>",
    description: `Data directory (sluice.db, secret.key). Default ${SERVER_CONFIG_DEFAULTS.dataDir}.`,
  },
  baseUrl: {
    placeholder: "<url>",
    description:
      "The server's public URL, scheme and host only: requests naming its host get the dashboard, Control API and MCP server. Default http://localhost:<port>.",
  },
  lockUrl: {
    placeholder: "<url>",
    description: "Public Lock API URL (/pools/*). Default: the base URL.",
  },
  poolDomain: {
    placeholder: "<domain>",
    description: `Pools answer at <subdomain>.<domain>. Default ${SERVER_CONFIG_DEFAULTS.poolDomain}.`,
  },
  databaseUrl: {
    placeholder: "<postgres://…>",
    description:
      "Keep the catalog, metrics and access log in PostgreSQL, shared by several servers (needs SLUICE_SECRET_KEY). Default: sluice.db in the data directory.",
  },
  redisUrl: {
    placeholder: "<url>",
    description: "Keep slots in Redis to share limits across servers. Default: in memory.",
  },
  redisClusterNodes: {
    placeholder: "<host:port,...>",
    description: "Keep slots in a Redis Cluster (some of its nodes) instead of one Redis.",
  },
  redisPrefix: {
    placeholder: "<prefix>",
    description: `Start of every Redis key; servers sharing pools use the same one. Default "${SERVER_CONFIG_DEFAULTS.redisPrefix}".`,
  },
  redisFailurePolicy: {
    placeholder: "closed|open",
    description: "When Redis is down: refuse (closed) or admit (open). Default closed.",
  },
  redisRestoreGraceMs: {
    placeholder: "<ms>",
    description: `After Redis restarted without its data, how long a re-created pool admits nobody new while servers hand back their slots. Default ${SERVER_CONFIG_DEFAULTS.redisRestoreGraceMs}.`,
  },
  metricsFlushMs: {
    placeholder: "<ms>",
    description: `How often metrics are saved. Default ${SERVER_CONFIG_DEFAULTS.metricsFlushMs}.`,
  },
  catalogSyncMs: {
    placeholder: "<ms>",
    description: `How often catalog changes are picked up. Default ${SERVER_CONFIG_DEFAULTS.catalogSyncMs}.`,
  },
  shutdownGraceMs: {
    placeholder: "<ms>",
    description: `Time in-flight requests get on shutdown. Default ${SERVER_CONFIG_DEFAULTS.shutdownGraceMs}.`,
  },
  headersTimeoutMs: {
    placeholder: "<ms>",
    description: `Time a request's head may take to arrive (then 408). Default ${SERVER_CONFIG_DEFAULTS.headersTimeoutMs}.`,
  },
  keepAliveTimeoutMs: {
    placeholder: "<ms>",
    description: `Time an idle keep-alive connection stays open. Default ${SERVER_CONFIG_DEFAULTS.keepAliveTimeoutMs}.`,
  },
  corsOrigins: {
    placeholder: "<origins>",
    description:
      "Comma-separated web origins (https://app.example) whose pages may call the Lock API; * for any. Default: only the server's own URLs.",
  },
  trustedProxies: {
    placeholder: "<cidrs>",
    description:
      "Comma-separated CIDRs of proxies in front of Sluice whose X-Forwarded-For hop pools' IP allowlists believe. Default none.",
  },
  jwksTimeoutMs: {
    placeholder: "<ms>",
    description: `Time a JWT policy's JWKS URL may take to answer (then 401). Default ${SERVER_CONFIG_DEFAULTS.jwksTimeoutMs}.`,
  },
  jwksNetwork: {
    placeholder: "public|private",
    description:
      "Where JWT and access-proxy policies' JWKS URLs may be fetched from: public (public addresses) or private (also private and loopback addresses). Default public.",
  },
  logFormat: {
    placeholder: "text|json",
    description: `Server log, access and error lines as readable text or one JSON object a line. Default ${SERVER_CONFIG_DEFAULTS.logFormat}.`,
  },
  logRequests: {
    description:
      "Log one access line per request (5xx answers and origin failures are logged always).",
  },
  metricsToken: {
    placeholder: "<token>",
    description:
      "GET /metrics then needs Authorization: Bearer <token> (SLUICE_METRICS_TOKEN keeps it out of ps). Default: open.",
  },
  clientMetadataNetwork: {
    placeholder: "public|private",
    description:
      "Where an MCP client's metadata document may be fetched from: public (https, public addresses) or private (also http, private and loopback addresses). Default public.",
  },
};

/** Flags that take no value. */
const SWITCHES: ReadonlySet<FlagField> = new Set(["logRequests"]);

const FLAG_FIELDS = Object.keys(FLAG_HELP) as FlagField[];

function flagOptions(): Record<string, OptionSpec> {
  const options: Record<string, OptionSpec> = {};
  for (const field of FLAG_FIELDS) {
    const type = SWITCHES.has(field) ? "boolean" : "string";
    options[SERVER_CONFIG_SOURCES[field].flag!] = { type, ...FLAG_HELP[field] };
  }
  return options;
}

function flagValues(args: ParsedCommand): Partial<Record<ServerConfigField, string | boolean>> {
  const flags: Partial<Record<ServerConfigField, string | boolean>> = {};
  for (const field of FLAG_FIELDS) {
    const value = args.values[SERVER_CONFIG_SOURCES[field].flag!];
    if (typeof value === "string" || typeof value === "boolean") flags[field] = value;
  }
  return flags;
}

function printEndpoints(say: ServerLog, listening: ListenResult, poolDomain: string): void {
  say.info(`Dashboard:   ${listening.url}/`);
  say.info(`Control API: ${listening.url}/api/v1`);
  say.info(`Lock API:    ${listening.lockUrl}/pools/<pool>/lock/acquire`);
  // Pool hosts are reached the way the base URL is (scheme and port; behind a reverse proxy
  // that may not be the port bound here).
  const base = new URL(listening.url);
  say.info(
    `Pool proxy:  ${base.protocol}//<pool>.${poolDomain}${base.port ? `:${base.port}` : ""}`,
  );
  say.info(`Operations:  ${listening.url}/metrics, /healthz, /readyz`);
  say.info(`MCP server:  ${listening.url}/mcp (for AI assistants; see docs/mcp.md)`);
}

/**
 * Resolves once the server has shut down after SIGINT or SIGTERM; SIGHUP re-reads the
 * catalog. A second SIGINT/SIGTERM during shutdown resolves at once with exit code 1.
 */
function runUntilStopped(
  server: SluiceServer,
  signals: SignalSource,
  io: CliIo,
  say: ServerLog,
): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: string) => () => {
      if (stopping) {
        say.warn(`Received ${signal} again; exiting without waiting.`);
        cleanup();
        resolve(1);
        // In-flight requests would otherwise keep the process alive until they end.
        io.exitNow?.(1);
        return;
      }
      stopping = true;
      say.info(`Received ${signal}; shutting down.`);
      server.close().then(
        () => {
          say.info("Stopped.");
          cleanup();
          resolve(0);
        },
        (error: unknown) => {
          say.error(`Shutdown failed: ${(error as Error).message}`);
          cleanup();
          resolve(1);
        },
      );
    };
    const onInt = stop("SIGINT");
    const onTerm = stop("SIGTERM");
    const onHup = () => {
      say.info("Received SIGHUP; re-reading the catalog.");
      server.syncCatalog().then(
        (report) => say.info(describeSync(report)),
        (error: unknown) => say.error(`Catalog sync failed: ${(error as Error).message}`),
      );
    };
    const cleanup = () => {
      signals.off("SIGINT", onInt);
      signals.off("SIGTERM", onTerm);
      signals.off("SIGHUP", onHup);
    };
    signals.on("SIGINT", onInt);
    signals.on("SIGTERM", onTerm);
    signals.on("SIGHUP", onHup);
  });
}

/**
 * `sluice serve`: runs the server until SIGINT/SIGTERM.
 *
 * @example
 * ```ts
 * await runCli(["serve", "--port", "0", "--data-dir", dir], { ...io, signals: process });
 * ```
 */
export const serveCommand: CommandSpec = {
  name: "serve",
  summary: "Run the Sluice server: dashboard, Control API, Lock API and pool proxy.",
  options: flagOptions(),
  details: [
    `Every flag can also come from the environment: ${FLAG_FIELDS.map((field) => SERVER_CONFIG_SOURCES[field].env).join(", ")}. Flags win over the environment.`,
    "SLUICE_SECRET_KEY (32 bytes in base64, e.g. `openssl rand -base64 32`) encrypts stored upstream credentials; " +
      "without it a key is created in the data directory. Every process sharing the data directory needs the same key.",
    "Signals: SIGINT/SIGTERM shut down gracefully, SIGHUP re-reads the catalog at once.",
  ],
  examples: [
    "sluice serve",
    "sluice serve --port 0 --data-dir /tmp/sluice",
    "SLUICE_BASE_URL=https://sluice.example.com SLUICE_POOL_DOMAIN=pools.example.com sluice serve --host 0.0.0.0",
  ],
  run: async (args, io) => {
    const config = loadServerConfig({ flags: flagValues(args), env: io.env });
    const say = createServerLog(config.logFormat, io.out, io.err);
    say.info("Starting Sluice.");
    const proxiesWarning = trustedProxiesWarning(config.trustedProxies);
    if (proxiesWarning) say.warn(proxiesWarning);
    // Loaded here so the catalog commands never load the server, Hono or the governor (and
    // work where those optional packages are not installed).
    const [{ createSluiceServer }, { DEFAULT_SERVER_APPS }] = await Promise.all([
      import("../../server/create-server.js"),
      import("../../server/default-apps.js"),
    ]).catch((error: unknown) => {
      throw missingPackageError(error, "sluice serve") ?? error;
    });
    let quiet = false;
    // The server formats its lines itself (config.logFormat).
    const log = (line: string) => {
      if (!quiet) io.out(line);
    };
    const server = await createSluiceServer(config, { ...DEFAULT_SERVER_APPS, log });
    let listening: ListenResult;
    try {
      listening = await server.listen();
    } catch (error) {
      // A server that never listened has nothing to report on its way down but the error.
      quiet = true;
      await server.close();
      throw error;
    }
    printEndpoints(say, listening, config.poolDomain);
    // `sluice user sign-in-link` on this directory then prints links to this server's port.
    if (config.databaseUrl === undefined) recordServerUrl(config.dataDir, listening.url);
    // Signals are handled from here on, also while the sign-in links are made.
    const stopped = runUntilStopped(server, io.signals ?? PROCESS_SIGNALS, io, say);
    try {
      // The links are for the operator's eyes: written as they are, not scrubbed like other lines.
      await printFirstSignInLinks((line) => say.reveal(line), server, listening.url);
      say.info("Press Ctrl+C to stop.");
    } catch (error) {
      // The server keeps serving: people can still sign in with a password.
      say.error(`Could not make the dashboard sign-in links: ${(error as Error).message}`);
    }
    return stopped;
  },
};
