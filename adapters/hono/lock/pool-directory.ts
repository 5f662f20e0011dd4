import { LRUCache } from "lru-cache";
import type { UpstreamCredential } from "../../../src/catalog/pool-secrets.js";
import { hashSecret, hasSecretShape, POOL_KEY_PREFIX } from "../../../src/catalog/secrets.js";
import type { CatalogStore, PoolKeyRecord, PoolRecord } from "../../../src/catalog/types.js";

/** What the Lock API and the proxy need from the catalog (a `CatalogService` fits). */
export interface TrafficCatalog {
  readonly store: CatalogStore;
  decryptCredential(pool: PoolRecord): UpstreamCredential | null;
  decryptSigningSecret(key: PoolKeyRecord): string | null;
  decryptRequestSecret(key: PoolKeyRecord): string | null;
  decryptDatabaseUrl(pool: PoolRecord): string | null;
}

/**
 * Catalog lookups on the request path of the Lock API and the proxy. `pool()` revalidates
 * against the catalog's change marker, so call it first in each request; the other methods
 * then answer from the same catalog version. Lookups are async (the catalog may be across a
 * network); a cached answer costs no I/O.
 */
export interface PoolDirectory {
  /** The pool served under `subdomain`, or undefined. */
  pool(subdomain: string): Promise<PoolRecord | undefined>;
  /**
   * The live key of `pool` for `plaintext`; null when malformed, unknown, another pool's,
   * revoked or expired. With `retired: true`, a revoked or expired key of `pool` is answered
   * too (a release: a key retired while its slot was held must still give the slot back).
   */
  key(
    pool: PoolRecord,
    plaintext: string,
    now: number,
    options?: { retired?: boolean },
  ): Promise<PoolKeyRecord | null>;
  /** The pool's managed upstream credential in clear, or null. */
  credential(pool: PoolRecord): UpstreamCredential | null;
  /** The key's origin-signing secret in clear, or null. */
  signingSecret(key: PoolKeyRecord): string | null;
  /** A database pool's read-role connection string in clear, or null. */
  databaseUrl(pool: PoolRecord): string | null;
  /** The key's request-signing secret (`hmac` caller policy) in clear, or null. */
  requestSecret(key: PoolKeyRecord): string | null;
}

const KEY_CACHE_SIZE = 10_000;
const MARKER_CHECK_INTERVAL_MS = 1;

/**
 * A {@link PoolDirectory} over the catalog that caches pools, keys and decrypted secrets
 * until the catalog's change marker moves (any catalog write, in this or another process).
 * A request then costs at most one marker read (once per millisecond, shared by the requests
 * arriving meanwhile) instead of row reads, a decryption and JSON parsing.
 * Keys are cached by hash, never by plaintext; revocation and expiry are checked at every use.
 *
 * @example
 * ```ts
 * const directory = new CatalogPoolDirectory(catalog);
 * const pool = await directory.pool("llm");
 * const key = pool && (await directory.key(pool, presentedKey, Date.now()));
 * ```
 */
export class CatalogPoolDirectory implements PoolDirectory {
  private marker: number | null = null;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private checking: Promise<void> | null = null;
  /** Bumped when the caches are cleared: a lookup that began before must not cache its answer. */
  private generation = 0;
  private readonly pools = new Map<string, PoolRecord>();
  private readonly keys = new LRUCache<string, PoolKeyRecord>({ max: KEY_CACHE_SIZE });
  private readonly credentials = new Map<number, UpstreamCredential | null>();
  private readonly signingSecrets = new Map<number, string | null>();
  private readonly databaseUrls = new Map<number, string | null>();
  private readonly requestSecrets = new Map<number, string | null>();

  constructor(private readonly catalog: TrafficCatalog) {}

  async pool(subdomain: string): Promise<PoolRecord | undefined> {
    const check = this.revalidate();
    if (check) await check;
    const cached = this.pools.get(subdomain);
    if (cached) return cached;
    const generation = this.generation;
    // Misses are not cached: any path or host name would otherwise grow the map.
    const pool = await this.catalog.store.findPoolBySubdomain(subdomain);
    if (pool && generation === this.generation) this.pools.set(subdomain, pool);
    return pool;
  }

  async key(
    pool: PoolRecord,
    plaintext: string,
    now: number,
    options?: { retired?: boolean },
  ): Promise<PoolKeyRecord | null> {
    if (!hasSecretShape(plaintext, POOL_KEY_PREFIX)) return null;
    const hash = hashSecret(plaintext);
    let key = this.keys.get(hash);
    if (!key) {
      const generation = this.generation;
      key = await this.catalog.store.findPoolKeyByHash(hash);
      if (!key || key.keyHash !== hash) return null;
      if (generation === this.generation) this.keys.set(hash, key);
    }
    if (key.poolId !== pool.id) return null;
    if (options?.retired) return key;
    if (key.revokedAt !== null) return null;
    // A key is dead from its expiresAt on (the catalog's rule).
    if (key.expiresAt !== null && now >= key.expiresAt) return null;
    return key;
  }

  credential(pool: PoolRecord): UpstreamCredential | null {
    return decrypted(this.credentials, pool.id, () => this.catalog.decryptCredential(pool));
  }

  signingSecret(key: PoolKeyRecord): string | null {
    return decrypted(this.signingSecrets, key.id, () => this.catalog.decryptSigningSecret(key));
  }

  databaseUrl(pool: PoolRecord): string | null {
    return decrypted(this.databaseUrls, pool.id, () => this.catalog.decryptDatabaseUrl(pool));
  }

  requestSecret(key: PoolKeyRecord): string | null {
    return decrypted(this.requestSecrets, key.id, () => this.catalog.decryptRequestSecret(key));
  }

  /** Null when the marker was read less than a millisecond ago; else the read (shared). */
  private revalidate(): Promise<void> | null {
    if (this.checking) return this.checking;
    // Reading the marker may be a query; under load, once per millisecond is plenty (a
    // change racing a request by less than that is a race either way).
    const now = performance.now();
    if (now - this.checkedAt < MARKER_CHECK_INTERVAL_MS) return null;
    this.checkedAt = now;
    this.checking = this.catalog.store
      .changeMarker()
      .then((marker) => this.noteMarker(marker))
      .finally(() => {
        this.checking = null;
      });
    return this.checking;
  }

  private noteMarker(marker: number): void {
    if (marker === this.marker) return;
    this.marker = marker;
    this.generation++;
    this.pools.clear();
    this.keys.clear();
    this.credentials.clear();
    this.signingSecrets.clear();
    this.databaseUrls.clear();
    this.requestSecrets.clear();
  }
}

/** A secret decrypted once per catalog version: from `cache`, else `decrypt` (kept, null too). */
function decrypted<T>(cache: Map<number, T | null>, id: number, decrypt: () => T | null): T | null {
  let value = cache.get(id);
  if (value === undefined) {
    value = decrypt();
    cache.set(id, value);
  }
  return value;
}
