/** A Lock API route with its path parameters. */
export type LockRoute =
  | { action: "acquire"; pool: string }
  | { action: "renew" | "release"; pool: string; slotId: string };

const PREFIX = "/pools/";
const LOCK_SEGMENT = "/lock/";

/**
 * The Lock API route of a request path (`/pools/{pool}/lock/acquire`,
 * `/pools/{pool}/lock/{slotId}/renew` or `.../release`), or null. Matches what the app's Hono
 * routes match, for paths without percent-escapes; a path with any `%` gives null, so the
 * caller leaves it to Hono's router and its decoding rules.
 *
 * @example
 * ```ts
 * matchLockRoute("/pools/llm/lock/acquire"); // { action: "acquire", pool: "llm" }
 * matchLockRoute("/pools/llm/lock/9b2c…/release"); // { action: "release", pool: "llm", slotId: "9b2c…" }
 * ```
 */
export function matchLockRoute(path: string): LockRoute | null {
  if (!path.startsWith(PREFIX) || path.includes("%")) return null;
  // Hand-rolled segment scan: this runs on every lock call.
  const poolEnd = path.indexOf("/", PREFIX.length);
  if (poolEnd <= PREFIX.length || !path.startsWith(LOCK_SEGMENT, poolEnd)) return null;
  const pool = path.slice(PREFIX.length, poolEnd);
  const rest = path.slice(poolEnd + LOCK_SEGMENT.length);
  if (rest === "acquire") return { action: "acquire", pool };
  const slotEnd = rest.indexOf("/");
  if (slotEnd <= 0) return null;
  const action = rest.slice(slotEnd + 1);
  if (action !== "renew" && action !== "release") return null;
  return { action, pool, slotId: rest.slice(0, slotEnd) };
}

/**
 * The path of an absolute request URL, up to the query, as Hono's strict router sees it
 * (for URLs without `%`).
 *
 * @example
 * ```ts
 * pathOfUrl("http://lock.localhost:8080/pools/llm/lock/acquire?x=1"); // "/pools/llm/lock/acquire"
 * ```
 */
export function pathOfUrl(url: string): string {
  const start = url.indexOf("/", url.indexOf(":") + 4);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  return query < 0 ? url.slice(start) : url.slice(start, query);
}
