import type { AccessProxyPolicy, JwtPolicy } from "../../../src/policies/policy-schema.js";
import { missingPackageError } from "../../packages/optional-package.js";
import { type KeySetOptions, KeySetUnavailableError, remoteKeySet } from "./remote-key-sets.js";

type Jose = typeof import("jose");

/** Where Google IAP publishes its signing keys, and its issuer. */
const GOOGLE_IAP = {
  jwksUrl: "https://www.gstatic.com/iap/verify/public_key-jwk",
  issuer: "https://cloud.google.com/iap",
} as const;

/** What a token is checked against (a `jwt` policy, or an access-proxy preset turned into one). */
export type JwtSettings = Omit<JwtPolicy, "requiredClaims"> & {
  requiredClaims?: JwtPolicy["requiredClaims"];
};

/**
 * The JWT settings of an access-proxy preset: Cloudflare Access (`Cf-Access-Jwt-Assertion`,
 * RS256, issuer `https://<team domain>`, the team's certs) and Google IAP
 * (`x-goog-iap-jwt-assertion`, ES256, issuer `https://cloud.google.com/iap`). A pasted
 * `jwks` replaces the certs URL (for networks that cannot reach it). null for the
 * trusted-header preset, which carries no token.
 *
 * @example
 * ```ts
 * presetJwt({ preset: "google-iap", audience: "/projects/1/global/backendServices/2" });
 * ```
 */
export function presetJwt(policy: AccessProxyPolicy): JwtSettings | null {
  if (policy.preset === "trusted-header") return null;
  const keys = policy.jwks
    ? { jwks: policy.jwks }
    : {
        jwksUrl:
          policy.preset === "google-iap"
            ? GOOGLE_IAP.jwksUrl
            : `https://${policy.teamDomain}/cdn-cgi/access/certs`,
      };
  return policy.preset === "google-iap"
    ? {
        header: "x-goog-iap-jwt-assertion",
        algorithms: ["ES256"],
        issuer: GOOGLE_IAP.issuer,
        audience: policy.audience,
        clockToleranceSeconds: 30,
        ...keys,
      }
    : {
        header: "cf-access-jwt-assertion",
        algorithms: ["RS256"],
        issuer: `https://${policy.teamDomain}`,
        audience: policy.audience,
        clockToleranceSeconds: 30,
        ...keys,
      };
}

/** Why a token was not accepted (no token value or secret in it). */
export class TokenRejected extends Error {}

/** Checks one token at `now`; resolves with its claims, or rejects with {@link TokenRejected}. */
export type JwtVerifier = (token: string, now: number) => Promise<Record<string, unknown>>;

let jose: Promise<Jose> | undefined;

function loadJose(): Promise<Jose> {
  jose ??= import("jose").catch((error: unknown) => {
    jose = undefined;
    throw missingPackageError(error, "JWT and access-proxy caller policies") ?? error;
  });
  return jose;
}

/**
 * A verifier for `settings` (jose's `jwtVerify`): only the listed algorithms (so `none` and
 * an HMAC signed with a public key are refused), the issuer and audience, `exp` required,
 * the clock tolerance; keys from the pasted JWKS, the PEM key or the JWKS URL (see
 * `remoteKeySet`: cached, each fetch bounded by `keySets.timeoutMs`; a key set that cannot be
 * fetched refuses the token).
 *
 * @example
 * ```ts
 * const verify = jwtVerifier(pool.callerPolicies.jwt, { timeoutMs: 5000, onUnavailable: console.error });
 * const claims = await verify(token, clock.now());
 * ```
 */
export function jwtVerifier(settings: JwtSettings, keySets: KeySetOptions = {}): JwtVerifier {
  let keyLookup: Promise<Parameters<Jose["jwtVerify"]>[1]> | undefined;
  const keys = async (library: Jose) => {
    if (settings.jwks)
      return library.createLocalJWKSet(settings.jwks as Parameters<Jose["createLocalJWKSet"]>[0]);
    if (settings.publicKey) {
      const pem = settings.publicKey;
      const imported = new Map<string, ReturnType<Jose["importSPKI"]>>();
      // A PEM key is imported for the token's algorithm, which must be one of the list.
      return async (header: { alg?: string }) => {
        const alg = header.alg ?? "";
        if (!(settings.algorithms as readonly string[]).includes(alg)) {
          throw new TokenRejected(`algorithm ${alg.slice(0, 10) || "none"} is not allowed`);
        }
        let key = imported.get(alg);
        if (!key) {
          key = library.importSPKI(pem, alg);
          imported.set(alg, key);
        }
        return key;
      };
    }
    return remoteKeySet(library, settings.jwksUrl as string, keySets);
  };
  return async (token, now) => {
    const library = await loadJose();
    keyLookup ??= keys(library);
    try {
      const { payload } = await library.jwtVerify(token, (await keyLookup) as never, {
        algorithms: [...settings.algorithms],
        issuer: settings.issuer,
        audience: settings.audience,
        requiredClaims: ["exp"],
        clockTolerance: settings.clockToleranceSeconds,
        currentDate: new Date(now),
      });
      return payload as Record<string, unknown>;
    } catch (error) {
      throw new TokenRejected(describeJoseError(error));
    }
  };
}

/** jose's reason in a few words: its codes name the failed check, never the token. */
function describeJoseError(error: unknown): string {
  if (error instanceof TokenRejected) return error.message;
  if (error instanceof KeySetUnavailableError) return "the key set could not be fetched";
  const code = (error as { code?: unknown } | null)?.code;
  const claim = (error as { claim?: unknown } | null)?.claim;
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return "the token has expired";
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      return typeof claim === "string"
        ? `its ${claim} claim is not accepted`
        : "a claim is not accepted";
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return "its algorithm is not allowed";
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return "its signature does not verify";
    case "ERR_JWKS_NO_MATCHING_KEY":
      return "no key of the key set matches it";
    case "ERR_JWT_INVALID":
    case "ERR_JWS_INVALID":
      return "it is not a valid JWT";
    default:
      return typeof code === "string" ? `it was refused (${code})` : "it could not be verified";
  }
}
