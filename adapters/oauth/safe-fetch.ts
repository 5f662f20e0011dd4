import { fetch } from "undici";
import { BodyTooLargeError, readCappedBody } from "../net/capped-body.js";
import { createGuardedAgent } from "../net/guarded-agent.js";
import { isPrivateLiteralHost } from "../net/private-addresses.js";
import { OAuthProtocolError } from "./oauth-error.js";

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
  const agent = createGuardedAgent({
    allowPrivateAddresses: allowPrivate,
    connectTimeoutMs: timeoutMs,
  });

  return async (url) => {
    if (url.protocol !== "https:" && !(options.allowHttp && url.protocol === "http:")) {
      throw refusal("its client_id must be an https URL");
    }
    if (!allowPrivate && isPrivateLiteralHost(url.hostname)) {
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
  try {
    return Buffer.from(await readCappedBody(body, maxBytes)).toString("utf8");
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw refusal(`its metadata document is larger than ${maxBytes} bytes`);
    }
    throw refusal("its metadata document could not be read");
  }
}

function refusal(why: string): OAuthProtocolError {
  return new OAuthProtocolError("invalid_client", `The client is not usable: ${why}.`);
}
