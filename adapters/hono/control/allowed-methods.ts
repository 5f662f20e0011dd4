/** A route as Hono lists it in `app.routes`. */
interface ListedRoute {
  readonly method: string;
  readonly path: string;
}

/**
 * The methods the app's routes answer on a path, for a 405's `Allow` header (RFC 9110
 * 15.5.6): an existing resource asked with the wrong method is "not allowed", not "not
 * found". Middleware (`ALL`) is skipped; GET implies HEAD, as Hono answers HEAD for it.
 * Build it once the routes are all registered.
 *
 * @example
 * ```ts
 * const allowedOn = allowedMethods(app.routes);
 * allowedOn("/api/v1/pools/llm/keys"); // ["POST"]
 * ```
 */
export function allowedMethods(routes: readonly ListedRoute[]): (path: string) => string[] {
  const patterns = routes
    .filter((route) => route.method !== "ALL")
    .map((route) => ({ method: route.method, pattern: toPattern(route.path) }));
  return (path) => {
    const methods = new Set<string>();
    for (const { method, pattern } of patterns) {
      if (!pattern.test(path)) continue;
      methods.add(method);
      if (method === "GET") methods.add("HEAD");
    }
    return [...methods];
  };
}

/** `/pools/:pool/keys` → a regex matching one path segment per parameter. */
function toPattern(routePath: string): RegExp {
  const source = routePath
    .split("/")
    .map((segment) =>
      segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("/");
  return new RegExp(`^${source}$`);
}
