import { type LookupAddress, lookup } from "node:dns";
import { BlockList, isIP } from "node:net";
import { Agent, fetch } from "undici";
import { OAuthProtocolError } from "./oauth-error.js";

/**
 * Addresses a server-side fetch of a client's metadata must never reach unless the operator
 * allows it: loopback, private networks, link-local (cloud metadata services), carrier-grade
 * NAT, multicast and reserved ranges, in IPv4 and IPv6 (IPv4-mapped ones too).
 */
const PRIVATE_RANGES = (() => {
  const list = new BlockList();
  for (const [network, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4],
  ] as const) {
    list.addSubnet(network, prefix, "ipv4");
  }
  for (const [network, prefix] of [
    ["::", 128],
    ["::1", 128],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8],
    ["64:ff9b::", 96],
    ["2001:db8::", 32],
  ] as const) {
    list.addSubnet(network, prefix, "ipv6");
  }
  return list;
})();

/**
 * Whether an IP address is loopback, private, link-local or otherwise not a public address.
 *
 * @example
 * ```ts
 * isPrivateAddress("169.254.169.254"); // true
 * isPrivateAddress("::ffff:10.0.0.1"); // true
 * ```
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE_RANGES.check(address, "ipv4");
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return PRIVATE_RANGES.check(mapped[1], "ipv4");
  return PRIVATE_RANGES.check(address, "ipv6");
}

/** Options of {@link createSafeJsonFetcher}. */
export interface SafeFetchOptions {
  /** Let the fetch reach private and loopback addresses (development, private networks). */
  allowPrivateAddresses?: boolean;
  /** Let the fetch use plain http (development only). */
  allowHttp?: boolean;
  /** Default 5 000 ms for the whole exchange. */
  timeoutMs?: number;
  /** Default 5 KiB: a metadata document is small. */
  maxBytes?: number;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A fetcher of small JSON documents from URLs a client names (its Client ID Metadata
 * Document), guarded against server-side request forgery: https only, no redirects, every
 * address the host name resolves to checked at connection time (so DNS rebinding between a
 * check and the connection does not help), a timeout and a size cap. Failures are
 * `invalid_client` OAuth errors that say what went wrong, never where the server could reach.
 *
 * @example
 * ```ts
 * const fetchJson = createSafeJsonFetcher();
 * const doc = await fetchJson(new URL("https://app.example/oauth/client.json"));
 * ```
 */
export function createSafeJsonFetcher(
  options: SafeFetchOptions = {},
): (url: URL) => Promise<unknown> {
  const allowPrivate = options.allowPrivateAddresses ?? false;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxBytes = options.maxBytes ?? 5_120;
  const guardedLookup = (hostname: string, lookupOptions: object, callback: LookupCallback) => {
    lookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (!allowPrivate && addresses.some((entry) => isPrivateAddress(entry.address))) {
        return callback(Object.assign(new Error("private address"), { code: "EPRIVATE" }), []);
      }
      if ((lookupOptions as { all?: boolean }).all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
  const agent = new Agent({ connect: { lookup: guardedLookup, timeout: timeoutMs } });

  return async (url) => {
    if (url.protocol !== "https:" && !(options.allowHttp && url.protocol === "http:")) {
      throw refusal("its client_id must be an https URL");
    }
    const literal = url.hostname.replace(/^\[|\]$/g, "");
    if (!allowPrivate && isIP(literal) !== 0 && isPrivateAddress(literal)) {
      throw refusal("its client_id points at a private address");
    }
    let response: Awaited<ReturnType<typeof fetch>>;
    try {
      response = await fetch(url, {
        dispatcher: agent,
        redirect: "error",
        headers: { accept: "application/json" },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch {
      throw refusal("its metadata document could not be fetched");
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw refusal(`fetching its metadata document answered HTTP ${response.status}`);
    }
    const text = await readCapped(response.body, maxBytes);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw refusal("its metadata document is not JSON");
    }
  };
}

async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<string> {
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw refusal(`its metadata document is larger than ${maxBytes} bytes`);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    if (error instanceof OAuthProtocolError) throw error;
    throw refusal("its metadata document could not be read");
  }
  return Buffer.concat(chunks).toString("utf8");
}

function refusal(why: string): OAuthProtocolError {
  return new OAuthProtocolError("invalid_client", `The client is not usable: ${why}.`);
}
