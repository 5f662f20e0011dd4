import { type LookupAddress, lookup } from "node:dns";
import type { Agent } from "undici";
import { optionalPackage } from "../packages/optional-package.js";
import { isPrivateAddress } from "./private-addresses.js";

/** The `code` of the connection error when a host name resolves to a private address. */
export const PRIVATE_ADDRESS_CODE = "EPRIVATE";

/** Options of {@link createGuardedAgent}. */
export interface GuardedAgentOptions {
  /** Let connections reach private and loopback addresses (development, private networks). */
  allowPrivateAddresses?: boolean | undefined;
  /** Bound on opening a connection; default undici's (10 s). */
  connectTimeoutMs?: number | undefined;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * An undici Agent for fetching URLs someone else chose, guarded against server-side request
 * forgery: unless `allowPrivateAddresses`, every address a host name resolves to is checked
 * when the connection is opened (so DNS rebinding between a check and the connection does
 * not help), and a name with any private address fails with code {@link PRIVATE_ADDRESS_CODE}.
 * IP literal hosts skip DNS: check them with `isPrivateLiteralHost` before fetching.
 *
 * @example
 * ```ts
 * const agent = createGuardedAgent({ connectTimeoutMs: 5000 });
 * await fetch(url, { dispatcher: agent, redirect: "manual" }); // undici's fetch
 * ```
 */
export function createGuardedAgent(options: GuardedAgentOptions = {}): Agent {
  const allowPrivate = options.allowPrivateAddresses ?? false;
  const guardedLookup = (hostname: string, lookupOptions: object, callback: LookupCallback) => {
    lookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (!allowPrivate && addresses.some((entry) => isPrivateAddress(entry.address))) {
        return callback(
          Object.assign(new Error("private address"), { code: PRIVATE_ADDRESS_CODE }),
          [],
        );
      }
      if ((lookupOptions as { all?: boolean }).all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
  // Loaded on first use: the CLI and a core-only install import this without the HTTP stack.
  const undici = optionalPackage<typeof import("undici")>("undici", "Fetching URLs a user names");
  return new undici.Agent({
    connect: {
      lookup: guardedLookup,
      ...(options.connectTimeoutMs === undefined ? {} : { timeout: options.connectTimeoutMs }),
    },
  });
}

/**
 * Whether a failed fetch was refused by {@link createGuardedAgent} because the host resolved
 * to a private address (fetch wraps the connection error as its `cause`).
 *
 * @example
 * ```ts
 * try { await fetch(url, { dispatcher: agent }); }
 * catch (error) { if (isPrivateAddressRefusal(error)) console.warn("private address"); }
 * ```
 */
export function isPrivateAddressRefusal(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    if ((current as { code?: unknown }).code === PRIVATE_ADDRESS_CODE) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
