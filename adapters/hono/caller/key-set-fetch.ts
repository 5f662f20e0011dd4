import type { Agent } from "undici";
import { BodyTooLargeError, readCappedBody } from "../../net/capped-body.js";
import { createGuardedAgent, isPrivateAddressRefusal } from "../../net/guarded-agent.js";
import { isPrivateLiteralHost } from "../../net/private-addresses.js";
import { optionalPackage } from "../../packages/optional-package.js";

/**
 * Where JWKS URLs may be fetched from: `public` addresses only (the default: a team admin
 * chooses the URL, and must not make the server reach its own network), or `private`
 * networks and loopback too (a key server inside the network, development).
 */
export type JwksNetwork = "public" | "private";

/** Largest key set read: real ones are a few KiB; this bounds what a URL can make us hold. */
export const JWKS_MAX_BYTES = 512 * 1024;

/** What jose's `customFetch` option is handed: the URL and jose's own request options. */
type KeySetFetch = (
  url: string,
  init: { headers: Headers; method: "GET"; signal: AbortSignal },
) => Promise<Response>;

// One connection pool per network setting per process, as the key sets themselves are shared.
const agents = new Map<JwksNetwork, Agent>();

function agentFor(network: JwksNetwork): Agent {
  let agent = agents.get(network);
  if (!agent) {
    agent = createGuardedAgent({ allowPrivateAddresses: network === "private" });
    agents.set(network, agent);
  }
  return agent;
}

/** Why a key set was not fetched, in words fit for the server log (never the URL's query). */
class KeySetRefused extends Error {}

/**
 * The fetch jose's `createRemoteJWKSet` uses for a JWKS URL: through an agent that checks
 * every address a host name resolves to when connecting (unless `network` is `private`), an
 * IP literal host checked before, redirects refused (a public URL must not bounce the
 * server elsewhere), and the body capped at `maxBytes`. Refusals reject with the reason;
 * jose's timeout signal is honoured and its abort passed on as is, so jose reports a timeout.
 *
 * @example
 * ```ts
 * jose.createRemoteJWKSet(url, { [jose.customFetch]: keySetFetch("public") });
 * ```
 */
export function keySetFetch(network: JwksNetwork, maxBytes = JWKS_MAX_BYTES): KeySetFetch {
  return async (url, init) => {
    if (network === "public" && isPrivateLiteralHost(new URL(url).hostname)) {
      throw privateAddress();
    }
    let response: Awaited<ReturnType<typeof import("undici").fetch>>;
    try {
      const { fetch } = optionalPackage<typeof import("undici")>("undici", "JWKS URLs");
      response = await fetch(url, {
        method: init.method,
        headers: [...init.headers],
        signal: init.signal,
        redirect: "manual",
        dispatcher: agentFor(network),
      });
    } catch (error) {
      if (isPrivateAddressRefusal(error)) throw privateAddress();
      throw error;
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {});
      const redirect = response.status >= 300 && response.status < 400;
      throw new KeySetRefused(
        redirect
          ? `it answered with a redirect (HTTP ${response.status}), which is not followed`
          : `it answered HTTP ${response.status}`,
      );
    }
    let body: Uint8Array;
    try {
      body = await readCappedBody(response.body as ReadableStream<Uint8Array> | null, maxBytes);
    } catch (error) {
      if (init.signal.aborted) throw init.signal.reason;
      if (error instanceof BodyTooLargeError) {
        throw new KeySetRefused(`the key set is ${error.message}`);
      }
      throw error;
    }
    return new Response(body, {
      status: 200,
      headers: { "content-type": response.headers.get("content-type") ?? "application/json" },
    });
  };
}

function privateAddress(): KeySetRefused {
  return new KeySetRefused(
    "it points at a private address (allowed only with --jwks-network private)",
  );
}
