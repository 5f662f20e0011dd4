import type { OutgoingHttpHeaders } from "node:http";
import type { HeaderLookup } from "../lock/request-headers.js";
import { overridesTo } from "./method-override.js";

/** Methods the proxy forwards (every standard method but TRACE and CONNECT), for `Allow`. */
export const FORWARDED_METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";

/**
 * What the proxy does with a request's method before it takes a slot:
 * - `refuse`: TRACE is never forwarded, nor asked for through a method-override header. The
 *   origin would echo the request back in the body, including the managed credential Sluice
 *   injected (response headers are filtered for it, bodies cannot be).
 * - `answer`: an OPTIONS request whose `Max-Forwards` is 0 is answered by Sluice itself as
 *   the final recipient (RFC 9110 7.6.2).
 * - `forward`: anything else; for OPTIONS, `forwardsLeft` is the decremented `Max-Forwards`
 *   to send upstream (null: the caller sent none or an unusable one, which is passed as is).
 *
 * @example
 * ```ts
 * methodRule("OPTIONS", new Headers({ "max-forwards": "3" })); // { action: "forward", forwardsLeft: 2 }
 * methodRule("TRACE", new Headers()); // { action: "refuse" }
 * ```
 */
export function methodRule(
  method: string,
  headers: HeaderLookup,
):
  | { action: "refuse" }
  | { action: "answer" }
  | { action: "forward"; forwardsLeft: number | null } {
  if (method === "TRACE" || overridesTo(headers, "TRACE")) {
    return { action: "refuse" };
  }
  if (method !== "OPTIONS") return { action: "forward", forwardsLeft: null };
  const text = headers.get("max-forwards")?.trim();
  if (!text || !/^\d{1,15}$/.test(text)) return { action: "forward", forwardsLeft: null };
  const forwards = Number(text);
  if (forwards === 0) return { action: "answer" };
  return { action: "forward", forwardsLeft: forwards - 1 };
}

/**
 * Sets the decremented `Max-Forwards` on the origin request's headers (when there is one).
 *
 * @example
 * ```ts
 * applyForwardsLeft(outgoing, 2); // outgoing["max-forwards"] === "2"
 * ```
 */
export function applyForwardsLeft(headers: OutgoingHttpHeaders, forwardsLeft: number | null): void {
  if (forwardsLeft !== null) headers["max-forwards"] = String(forwardsLeft);
}
