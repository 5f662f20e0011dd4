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
 * Whether a requested redirect URI is one of the registered ones: character for character,
 * except that a loopback `http` URI may name any port (RFC 8252 §7.3, OAuth 2.1 §2.3.1): a
 * native client listens on a port the system picks at each sign-in, which its registration
 * (or its metadata document, written once) cannot know. Host, path and query still match
 * exactly: `localhost` and `127.0.0.1` are not each other.
 *
 * @example
 * ```ts
 * registeredRedirectUri("http://127.0.0.1:51004/cb", ["http://127.0.0.1/cb"]); // true
 * registeredRedirectUri("https://app.example/cb", ["https://app.example/cb/"]); // false
 * ```
 */
export function registeredRedirectUri(requested: string, registered: readonly string[]): boolean {
  if (registered.includes(requested)) return true;
  const wanted = loopbackWithoutPort(requested);
  return wanted !== null && registered.some((uri) => loopbackWithoutPort(uri) === wanted);
}

/**
 * Whether a redirect URI leads back to the person's own machine (`http` on a loopback host):
 * the authorization endpoint sends errors there by itself, and to any other URI only through a
 * link the person follows, so it is no open redirector to a site a client registered.
 *
 * @example
 * ```ts
 * isLoopbackRedirectUri("http://127.0.0.1:33418/cb"); // true
 * isLoopbackRedirectUri("https://app.example/cb"); // false
 * ```
 */
export function isLoopbackRedirectUri(uri: string): boolean {
  return loopbackWithoutPort(uri) !== null;
}

/** A loopback http URI as written, less its port; null for any other URI. */
function loopbackWithoutPort(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" || !LOOPBACK_HOSTS.has(url.hostname)) return null;
  // As written after the authority (no normalization), so only the port may differ.
  const authority = /^http:\/\/([^/?#]*)/i.exec(uri)?.[1] ?? "";
  const host = authority.replace(/:\d*$/, "");
  if (host.toLowerCase() !== url.hostname || url.username !== "" || url.password !== "") {
    return null;
  }
  return `http://${host}${uri.slice(`http://${authority}`.length)}`;
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
