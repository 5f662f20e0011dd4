const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Why a redirect URI may not be registered, or null when it may: an absolute `https` URL, or
 * `http` on a loopback host (native apps, RFC 8252 §7.3), with no fragment and no user info.
 * Redirect URIs are later compared exactly, character for character.
 *
 * @example
 * ```ts
 * redirectUriProblem("http://127.0.0.1:33418/callback"); // null
 * redirectUriProblem("http://example.com/cb"); // "must use https (http only on a loopback host)"
 * ```
 */
export function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== "string" || uri.length > 2000)
    return "must be a URL of at most 2000 characters";
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "must be an absolute URL";
  }
  if (url.hash !== "" || uri.includes("#")) return "must not have a fragment";
  if (url.username !== "" || url.password !== "") return "must not carry user information";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return "must use https (http only on a loopback host)";
}

/**
 * The host a consent page names for a redirect URI (with its port when it has one).
 *
 * @example
 * ```ts
 * redirectHost("http://127.0.0.1:33418/cb"); // "127.0.0.1:33418"
 * ```
 */
export function redirectHost(uri: string): string {
  return new URL(uri).host;
}
