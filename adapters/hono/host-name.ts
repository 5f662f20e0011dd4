/**
 * Host name of a `Host` header value without the port, lower-cased; IPv6 brackets removed.
 *
 * @example
 * ```ts
 * hostWithoutPort("Chat.Pools.Localhost:8080"); // "chat.pools.localhost"
 * hostWithoutPort("[::1]:8080"); // "::1"
 * ```
 */
export function hostWithoutPort(hostHeader: string): string {
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    return end > 0 ? host.slice(1, end) : host;
  }
  const colon = host.indexOf(":");
  // A bare IPv6 address has several colons and no port.
  const name = colon >= 0 && host.indexOf(":", colon + 1) < 0 ? host.slice(0, colon) : host;
  // "example.com." is the same name as "example.com".
  return name.endsWith(".") ? name.slice(0, -1) : name;
}
