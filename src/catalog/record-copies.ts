import type { CallerPolicies } from "../policies/policy-schema.js";
import type {
  ApiTokenRecord,
  EncryptedSecret,
  PoolInput,
  PoolKeyRecord,
  PoolRecord,
} from "./types.js";

// The memory store hands out copies so a caller mutating a record cannot change the store,
// matching SQLite, which builds new objects on every read. Hand-written rather than
// structuredClone: these run on the proxy's key and pool lookups.

function copySecret(secret: EncryptedSecret): EncryptedSecret {
  return { iv: secret.iv, tag: secret.tag, data: secret.data };
}

function copyReadPaths(
  readPaths: Record<string, string[]> | null,
): Record<string, string[]> | null {
  if (!readPaths) return null;
  const copy: Record<string, string[]> = {};
  for (const [method, prefixes] of Object.entries(readPaths)) copy[method] = [...prefixes];
  return copy;
}

function copyCallerPolicies(policies: CallerPolicies | null): CallerPolicies | null {
  // Nested JSON (CIDR lists, key sets, claim lists): a deep copy keeps the record unshared.
  return policies ? structuredClone(policies) : null;
}

/** A pool input or record with its nested arrays, maps and secrets copied. */
export function copyPoolFields<T extends PoolInput | PoolRecord>(pool: T): T {
  return {
    ...pool,
    credential: pool.credential
      ? { header: pool.credential.header, value: copySecret(pool.credential.value) }
      : null,
    database: pool.database
      ? { ...pool.database, connectionString: copySecret(pool.database.connectionString) }
      : null,
    readMethods: [...pool.readMethods],
    readPaths: copyReadPaths(pool.readPaths),
    callerPolicies: copyCallerPolicies(pool.callerPolicies),
  };
}

export function copyPoolKey(key: PoolKeyRecord): PoolKeyRecord {
  return {
    ...key,
    signingSecret: key.signingSecret ? copySecret(key.signingSecret) : null,
    requestSecret: key.requestSecret ? copySecret(key.requestSecret) : null,
  };
}

export function copyApiToken(token: ApiTokenRecord): ApiTokenRecord {
  return { ...token, abilities: [...token.abilities] };
}
