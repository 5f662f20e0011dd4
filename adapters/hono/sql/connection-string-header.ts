import { nodeBindings } from "../lock/node-bindings.js";

/** What the Neon driver sends the caller's own connection string in (user and password included). */
export const CONNECTION_STRING_HEADER = "neon-connection-string";

/**
 * Removes `Neon-Connection-String` from the request as soon as a database pool serves it,
 * so nothing that runs or logs after this (error logs, request logs) can see the password
 * it may hold. It is never read: the pool's host and key route and admit, and the pool's
 * own read role connects.
 *
 * @example
 * ```ts
 * stripConnectionString(request, env);
 * ```
 */
export function stripConnectionString(request: Request, env: unknown): void {
  const { incoming } = nodeBindings(env);
  if (incoming) {
    const raw = incoming.rawHeaders;
    for (let i = raw.length - 2; i >= 0; i -= 2) {
      if ((raw[i] as string).toLowerCase() === CONNECTION_STRING_HEADER) raw.splice(i, 2);
    }
    // Node builds `headers` from the raw pairs on first read, and keeps it.
    delete incoming.headers[CONNECTION_STRING_HEADER];
    return;
  }
  try {
    request.headers.delete(CONNECTION_STRING_HEADER);
  } catch {
    // Immutable headers (a runtime's own request): nothing of Sluice's logs them.
  }
}
