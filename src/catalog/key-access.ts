import { isAmbiguousPath } from "./ambiguous-path.js";
import type { PoolKeyRecord, PoolRecord } from "./types.js";

/** Methods every key admits (contract 4.1 rule 2). */
export const SAFE_METHODS: readonly string[] = ["GET", "HEAD", "OPTIONS"];
/**
 * The common methods a write key's `allowed_methods` lists (with the pool's extra read
 * methods): a write key admits any method, which no list can spell out.
 */
export const ALL_METHODS: readonly string[] = [
  "GET",
  "HEAD",
  "OPTIONS",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
];

type AccessPool = Pick<PoolRecord, "backend" | "readMethods" | "readPaths">;
type AccessKey = Pick<PoolKeyRecord, "access">;

/**
 * Whether a key may send `method` to `path` on the pool (contract section 4.1 rule 2):
 * - postgres backend: always (every query is a POST; the database refuses writes, not the key);
 * - write key (the default, and keys minted before access existed): every method;
 * - read key: GET, HEAD, OPTIONS, and the pool's `readMethods`; an extra read method listed
 *   in `readPaths` is admitted only under one of its prefixes (a method absent from
 *   `readPaths` is unscoped; an empty prefix list admits nothing).
 *
 * `path` is the request path without the query string. Prefixes match whole segments
 * ("/v1/search" admits "/v1/search" and "/v1/search/x", not "/v1/searchx"), and a scoped
 * method is refused on an ambiguous path (dot segments in any spelling, encoded slashes or
 * backslashes; see {@link isAmbiguousPath}), which an origin might resolve to somewhere
 * outside the prefix. The proxy refuses such paths outright, by the same rule.
 *
 * @example
 * ```ts
 * if (!keyAllowsMethod(pool, key, request.method, url.pathname)) throw new ForbiddenError();
 * ```
 */
export function keyAllowsMethod(
  pool: AccessPool,
  key: AccessKey,
  method: string,
  path: string,
): boolean {
  if (pool.backend === "postgres" || key.access !== "read") return true;
  const upper = method.toUpperCase();
  if (SAFE_METHODS.includes(upper)) return true;
  if (!pool.readMethods.includes(upper)) return false;
  const prefixes = pool.readPaths?.[upper];
  if (!prefixes) return true;
  return !isAmbiguousPath(path) && prefixes.some((prefix) => pathHasPrefix(path, prefix));
}

/**
 * The methods a key admits, for the PoolKey resource's `allowed_methods`. A write key's list
 * is {@link ALL_METHODS} plus the pool's extra read methods, so it always covers what a read
 * key of the pool lists.
 *
 * @example
 * ```ts
 * allowedMethodsFor({ backend: "http", readMethods: ["QUERY"], readPaths: null }, { access: "read" });
 * // ["GET", "HEAD", "OPTIONS", "QUERY"]
 * ```
 */
export function allowedMethodsFor(pool: AccessPool, key: AccessKey): string[] {
  const writes = pool.backend === "postgres" || key.access !== "read";
  const methods = [...(writes ? ALL_METHODS : SAFE_METHODS)];
  for (const method of pool.readMethods) {
    const upper = method.toUpperCase();
    if (!methods.includes(upper)) methods.push(upper);
  }
  return methods;
}

/**
 * The pool's path scoping of extra read methods (keyed by method, only methods the pool
 * treats as reads), or null when nothing is scoped: the PoolKey resource then omits `read_paths`.
 *
 * @example
 * ```ts
 * readPathsFor(pool); // { POST: ["/v1/embeddings"] }
 * ```
 */
export function readPathsFor(pool: AccessPool): Record<string, string[]> | null {
  if (!pool.readPaths || pool.backend === "postgres") return null;
  const scoped: Record<string, string[]> = {};
  let any = false;
  for (const [method, prefixes] of Object.entries(pool.readPaths)) {
    if (!pool.readMethods.includes(method.toUpperCase())) continue;
    scoped[method.toUpperCase()] = [...prefixes];
    any = true;
  }
  return any ? scoped : null;
}

function pathHasPrefix(path: string, prefix: string): boolean {
  if (!path.startsWith(prefix)) return false;
  return path.length === prefix.length || prefix.endsWith("/") || path[prefix.length] === "/";
}
