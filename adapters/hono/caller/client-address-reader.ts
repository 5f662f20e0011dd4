import type { Context } from "hono";
import { AddressList } from "../../../src/policies/address-list.js";
import { clientAddress } from "../../../src/policies/client-address.js";
import { remoteAddressOf } from "./remote-address.js";

/** Reads the address of the client behind a request. */
export type ClientAddressReader = (c: Context) => string | null;

/**
 * The client's address as the server's throttles count it: the socket's peer, and behind
 * the server's trusted proxies (`--trusted-proxies`) the `X-Forwarded-For` hop they vouch
 * for, by the same walk as the IP policy ({@link clientAddress}). Without it, every sign-in
 * or registration behind a load balancer would share the balancer's one address and one
 * throttle; an untrusted peer's `X-Forwarded-For` is ignored, so it cannot pick a fresh
 * address per attempt.
 *
 * @example
 * ```ts
 * const addressOf = clientAddressReader(["10.0.0.0/8"]);
 * addressOf(c); // "203.0.113.7" for a request through 10.0.0.2 with X-Forwarded-For: 203.0.113.7
 * ```
 */
export function clientAddressReader(trustedProxies: readonly string[] = []): ClientAddressReader {
  const trusted = trustedProxies.length > 0 ? AddressList.parse(trustedProxies) : null;
  if (trusted === null) return (c) => remoteAddressOf(c.env);
  return (c) =>
    clientAddress(remoteAddressOf(c.env), c.req.header("x-forwarded-for") ?? null, trusted);
}
