import { lockAppForServer, proxyAppForServer } from "../hono/lock/server-apps.js";
import type { SluiceServerOptions } from "./create-server.js";

/**
 * The Lock API and pool proxy apps `sluice serve` mounts (both share one access log and
 * one catalog cache; see `adapters/hono/lock/server-apps.ts`).
 *
 * @example
 * ```ts
 * const server = await createSluiceServer(config, { ...DEFAULT_SERVER_APPS, log });
 * ```
 */
export const DEFAULT_SERVER_APPS: Pick<SluiceServerOptions, "lockApp" | "proxyApp"> = {
  // Lock API and pool proxy (issue 4).
  lockApp: lockAppForServer,
  proxyApp: proxyAppForServer,
};
