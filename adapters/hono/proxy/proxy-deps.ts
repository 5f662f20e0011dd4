import type { AccessLog } from "../../../src/access-log/types.js";
import type { Clock } from "../../../src/clock/clock.js";
import type { Governor } from "../../../src/governor/types.js";
import type { NonceStore } from "../../../src/policies/nonce-store.js";
import type { IpPolicy } from "../caller/ip-policy.js";
import type { JwksNetwork } from "../caller/key-set-fetch.js";
import type { PoolDirectory, TrafficCatalog } from "../lock/pool-directory.js";
import type { SqlServing } from "../sql/serve-sql.js";
import type { createUpstreamClient, UpstreamClient } from "./upstream-call.js";

/** Largest request body of a pool with origin signing (the digest needs the whole body). */
export const SIGNED_BODY_LIMIT_BYTES = 10 * 1024 * 1024;

/** Dependencies of the pool proxy app. */
export interface ProxyAppDeps {
  governor: Governor;
  catalog: TrafficCatalog;
  /** Pools are served at `{subdomain}.{poolDomain}`. */
  poolDomain: string;
  /** Time for key expiry, upstream deadlines, signatures and the access log; default the governor's clock. */
  clock?: Clock;
  /** Where acquire attempts are logged; none: not logged. */
  accessLog?: AccessLog;
  /** Catalog lookups; default a caching `CatalogPoolDirectory` over `catalog`. */
  directory?: PoolDirectory;
  ipPolicy?: IpPolicy;
  /** Proxies (CIDRs) whose `X-Forwarded-For` hop a pool's `ipAllowlist` believes; default none. */
  trustedProxies?: readonly string[];
  /** Where signed requests' nonces are remembered; default a `MemoryNonceStore` of this app. */
  nonces?: NonceStore;
  /** Largest body of a signed pool's request; default 10 MiB. */
  signedBodyLimitBytes?: number;
  /** Origin connection pools; default a fresh {@link createUpstreamClient}, destroyed by `close()`. */
  upstreamClient?: UpstreamClient;
  /**
   * How database pools (`backend: "postgres"`) are served: `POST /sql` on their host, run by
   * `sql.runner`, which `close()` closes too. None: such pools answer 501.
   */
  sql?: SqlServing;
  /**
   * How long a JWT policy's JWKS URL may take to answer (then the token is refused, 401);
   * default 5 s.
   */
  jwksTimeoutMs?: number;
  /**
   * Where JWT and access-proxy policies' JWKS URLs may be fetched from. `public` (the
   * default) refuses a URL whose host is, or resolves to, a loopback, private or link-local
   * address (cloud metadata), like an unreachable key set (401, logged once): pool settings
   * come from team admins, who must not make the server reach its own network. `private`
   * allows them (a key server inside your network, development). Redirects are never
   * followed and a key set is read up to 512 KiB either way.
   *
   * @example
   * ```ts
   * createLockApp({ governor, catalog, jwksNetwork: "private" }); // JWKS on 10.0.0.5
   * ```
   */
  jwksNetwork?: JwksNetwork;
  /**
   * Receives unexpected errors (answered with a bare 500) and their request, and a JWKS URL
   * that cannot be fetched (once per outage); default `console.error`.
   */
  logError?: (error: unknown, request?: Request) => void;
  /**
   * Receives every origin failure (unreachable, too slow, a broken answer, a body cut off)
   * with its request, for a server's log; the client's answer is the proxy's own 502 or 504.
   */
  onOriginFailure?: (request: Request, cause: Error) => void;
}
