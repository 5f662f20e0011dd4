import { isReservedHeader } from "../catalog/credential-rules.js";

// The rules for single settings of the caller policies that need more than a pattern: which
// header a token may come in, which key set URL can work, which pasted key is a public one.

/**
 * Why a (lower-case) header cannot carry a caller's token, or null: Sluice's own `x-svc-*`
 * headers (the pool key, request signatures), and those that frame or route the message
 * (`host`, `content-length`, `x-forwarded-for`…) or that a proxy consumes (hop-by-hop), the
 * same a managed credential may not use.
 *
 * @example
 * ```ts
 * reservedHeaderIssue("x-svc-key"); // "x-svc-key is Sluice's own header (…)…"
 * reservedHeaderIssue("x-caller-token"); // null
 * ```
 */
export function reservedHeaderIssue(name: string): string | null {
  if (name.startsWith("x-svc-")) {
    return `${name} is Sluice's own header (the pool key and request signatures go in X-Svc-…): use another, such as x-caller-token.`;
  }
  if (isReservedHeader(name)) {
    return `${name} belongs to the connection, not the caller (proxies drop or rewrite it): use another, such as x-caller-token.`;
  }
  return null;
}

/** Longest key set URL taken (browsers and servers cap URLs about there). */
export const MAX_KEY_SET_URL_LENGTH = 2048;
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Why a JWKS URL cannot be fetched as given, or null: it must be https (http only on a
 * loopback host), at most {@link MAX_KEY_SET_URL_LENGTH} characters, without a user or
 * password (fetch refuses them, and the pool page would show them) and without a #fragment
 * (never sent). Never echoes the URL.
 *
 * @example
 * ```ts
 * keySetUrlIssue("https://idp.example/jwks.json"); // null
 * keySetUrlIssue("https://user:pw@idp.example/jwks.json"); // "Must not hold a user or password …"
 * ```
 */
export function keySetUrlIssue(text: string): string | null {
  if (text.length > MAX_KEY_SET_URL_LENGTH) {
    return `Must be at most ${MAX_KEY_SET_URL_LENGTH} characters.`;
  }
  const url = URL.canParse(text) ? new URL(text) : null;
  const local = url?.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
  if (!url || (url.protocol !== "https:" && !local)) {
    return "Must be an https:// URL (http:// only on localhost).";
  }
  if (url.username !== "" || url.password !== "") {
    return "Must not hold a user or password (user:password@): a key set URL is fetched without credentials.";
  }
  if (text.includes("#")) return "Must not have a #fragment (it is never sent).";
  return null;
}

/**
 * A key set URL as pages show it: without a user, password or query (older settings may hold
 * them, and they may be secrets); a query is marked `?…`.
 *
 * @example
 * ```ts
 * shownKeySetUrl("https://u:p@idp.example/jwks?token=x"); // "https://idp.example/jwks?…"
 * ```
 */
export function shownKeySetUrl(text: string): string {
  if (!URL.canParse(text)) return "(not a URL)";
  const url = new URL(text);
  return `${url.origin}${url.pathname}${url.search === "" ? "" : "?…"}`;
}

/** The refusal of pasted private or secret key material (it is never stored nor shown back). */
export const SECRET_KEY_MESSAGE =
  "Only public keys belong here: this holds a private or secret key. Paste the public key (a JWK without d or k, or -----BEGIN PUBLIC KEY-----).";

// The JWK members only a private (d, p, q, dp, dq, qi, oth) or symmetric (k) key has.
const SECRET_JWK_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/**
 * Whether a JWK is a public key only (no private or symmetric key members, not `oct`).
 *
 * @example
 * ```ts
 * isPublicJwk({ kty: "EC", crv: "P-256", x: "…", y: "…" }); // true
 * isPublicJwk({ kty: "oct", k: "c2VjcmV0" }); // false
 * ```
 */
export function isPublicJwk(key: Readonly<Record<string, unknown>>): boolean {
  return key.kty !== "oct" && SECRET_JWK_MEMBERS.every((member) => !Object.hasOwn(key, member));
}

/**
 * Whether pasted text looks like it holds private or secret key material (a PEM private key,
 * or a JWK member only such keys have), even when it is not valid JSON: such text is never
 * shown back in a form.
 *
 * @example
 * ```ts
 * looksLikeSecretKey("-----BEGIN PRIVATE KEY-----\n…"); // true
 * ```
 */
export function looksLikeSecretKey(text: string): boolean {
  return (
    /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text) ||
    new RegExp(`"(?:${SECRET_JWK_MEMBERS.join("|")})"\\s*:`).test(text)
  );
}
