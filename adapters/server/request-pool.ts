import { createRouteResolver, type HostRouterOptions } from "./host-router.js";

/**
 * Names the pool a request is for, the way the host router routes it: the label of a pool
 * host, or the `{pool}` of a Lock API path; null for the Control API and unknown hosts. The
 * name is what the caller sent: the pool may not exist.
 *
 * @example
 * ```ts
 * const poolOf = requestPoolResolver({ baseUrl, lockUrl, poolDomain: "pools.localhost" });
 * poolOf(new Request("http://chat.pools.localhost/v1/chat")); // "chat"
 * ```
 */
export function requestPoolResolver(
  options: Pick<HostRouterOptions, "baseUrl" | "lockUrl" | "poolDomain">,
): (request: Request) => string | null {
  const resolve = createRouteResolver(options);
  return (request) => {
    const url = new URL(request.url);
    const host = request.headers.get("host") ?? url.host;
    const target = resolve(host, url.pathname);
    if (target === "proxy") return url.hostname.slice(0, url.hostname.indexOf("."));
    if (target !== "lock") return null;
    const segment = url.pathname.split("/")[2];
    return segment ? decodeURIComponentSafely(segment) : null;
  };
}

function decodeURIComponentSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
