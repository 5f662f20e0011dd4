import { createPublicKey, type KeyObject } from "node:crypto";

// The JWT policy's keys are checked when they are configured, not first when a token comes:
// a PEM whose body is not a key, a JWK with a broken modulus, or a key of a type none of the
// listed algorithms uses would otherwise refuse every token ("it could not be verified"),
// with nothing in the log to say why.

const RSA_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"] as const;
const EC_CURVES: Readonly<Record<string, { name: string; algorithm: string }>> = {
  prime256v1: { name: "P-256", algorithm: "ES256" },
  secp384r1: { name: "P-384", algorithm: "ES384" },
  secp521r1: { name: "P-521", algorithm: "ES512" },
};

/** jose refuses RSA keys shorter than this for every RS and PS algorithm. */
const MIN_RSA_BITS = 2048;

/** A public key as read by Node, or why it could not be read or used. */
export type ReadKey = { key: KeyObject } | { issue: string };

/** Node reads an RSA key with a garbled modulus as a short one; jose would refuse it anyway. */
function usable(key: KeyObject, what: string): ReadKey {
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (key.asymmetricKeyType?.startsWith("rsa") && (bits ?? 0) < MIN_RSA_BITS) {
    return {
      issue: `${what} is an RSA key of ${bits ?? 0} bits: JWTs need at least ${MIN_RSA_BITS} (check that its modulus n was pasted whole).`,
    };
  }
  return { key };
}

/**
 * Reads a PEM SPKI public key (`-----BEGIN PUBLIC KEY-----`). Never echoes the text.
 *
 * @example
 * ```ts
 * readPemPublicKey("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----");
 * // { issue: "This PEM holds no public key Node can read: check that it was pasted whole." }
 * ```
 */
export function readPemPublicKey(text: string): ReadKey {
  try {
    return usable(createPublicKey({ key: text, format: "pem" }), "This PEM");
  } catch {
    return { issue: "This PEM holds no public key Node can read: check that it was pasted whole." };
  }
}

/**
 * Reads one public JWK of a pasted key set (`RSA`, `EC` or `OKP`). Never echoes the key.
 *
 * @example
 * ```ts
 * readJwkPublicKey({ kty: "RSA", n: "x", e: "AQAB" }, 0); // { issue: "Key 1 of the set (keys[0]) …" }
 * ```
 */
export function readJwkPublicKey(jwk: Readonly<Record<string, unknown>>, index: number): ReadKey {
  const what = `Key ${index + 1} of the set (keys[${index}])`;
  try {
    return usable(createPublicKey({ key: jwk as never, format: "jwk" }), what);
  } catch {
    return {
      issue: `${what} is not a public key Node can read: check its kty and its members (n and e, or crv, x and y).`,
    };
  }
}

/**
 * The JWS algorithms a public key can verify: RS*\/PS* for RSA, ES256/384/512 for the EC curve
 * P-256/384/521, EdDSA for Ed25519 and Ed448; none for other keys (X25519, secp256k1…).
 *
 * @example
 * ```ts
 * keyAlgorithms(createPublicKey(pem)); // ["ES256"] for a P-256 key
 * ```
 */
export function keyAlgorithms(key: KeyObject): readonly string[] {
  switch (key.asymmetricKeyType) {
    case "rsa":
      return RSA_ALGORITHMS;
    case "rsa-pss":
      return RSA_ALGORITHMS.filter((algorithm) => algorithm.startsWith("PS"));
    case "ec": {
      const curve = EC_CURVES[key.asymmetricKeyDetails?.namedCurve ?? ""];
      return curve ? [curve.algorithm] : [];
    }
    case "ed25519":
    case "ed448":
      return ["EdDSA"];
    default:
      return [];
  }
}

/** A key's type in a person's words: "an RSA key", "an EC P-256 key", "an Ed25519 key". */
function keyKind(key: KeyObject): string {
  const type = key.asymmetricKeyType ?? "unknown";
  if (type === "ec") {
    const curve = key.asymmetricKeyDetails?.namedCurve ?? "";
    return `an EC ${EC_CURVES[curve]?.name ?? curve} key`;
  }
  if (type === "rsa" || type === "rsa-pss") return `an ${type.toUpperCase()} key`;
  return `an ${type.charAt(0).toUpperCase()}${type.slice(1)} key`;
}

/**
 * Why none of `keys` can verify a token signed with one of `algorithms`, or null when one
 * can: such a policy would refuse every token.
 *
 * @example
 * ```ts
 * keysAlgorithmsIssue([rsaKey], ["ES256"]);
 * // "No key here verifies ES256: this is an RSA key (RS256 … PS512). …"
 * ```
 */
export function keysAlgorithmsIssue(
  keys: readonly KeyObject[],
  algorithms: readonly string[],
): string | null {
  if (keys.some((key) => keyAlgorithms(key).some((alg) => algorithms.includes(alg)))) return null;
  const kinds = [...new Set(keys.map(keyKind))];
  const verifiable = [...new Set(keys.flatMap((key) => keyAlgorithms(key)))];
  const what = kinds.length === 1 ? `this is ${kinds[0]}` : `these are ${kinds.join(", ")}`;
  const fits = verifiable.length === 0 ? "which signs no JWT" : `for ${verifiable.join(", ")}`;
  return `No key here verifies ${algorithms.join(", ")}: ${what} (${fits}), so every token would be refused. Paste the identity provider's signing key, or list the algorithm it signs with.`;
}
