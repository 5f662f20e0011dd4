import type { AccessLog } from "../../../src/access-log/types.js";
import type { Clock } from "../../../src/clock/clock.js";
import type { Governor } from "../../../src/governor/types.js";
import type { NonceStore } from "../../../src/policies/nonce-store.js";
import type { IpPolicy } from "../caller/ip-policy.js";
import type { JwksNetwork } from "../caller/key-set-fetch.js";
import type { PoolDirectory, TrafficCatalog } from "./pool-directory.js";

export type { IpPolicy } from "../caller/ip-policy.js";

/** Dependencies of the Lock API app (`ServerAppDeps` of the server fits). */
export interface LockAppDeps {
  governor: Governor;
  catalog: TrafficCatalog;
  /** Time for key expiry and the access log; default the governor's clock. */
  clock?: Clock;
  /** Where acquire attempts are logged; none: not logged. */
  accessLog?: AccessLog;
  /** Catalog lookups; default a caching {@link CatalogPoolDirectory} over `catalog`. */
  directory?: PoolDirectory;
  ipPolicy?: IpPolicy;
  /**
   * Proxies (CIDRs) in front of this server whose `X-Forwarded-For` hop is believed when
   * a pool's `ipAllowlist` reads the caller's address; default none (the socket's address).
   */
  trustedProxies?: readonly string[];
  /**
   * Where signed requests' nonces are remembered (pools with the `hmac` policy); default a
   * `MemoryNonceStore` of this app. Servers sharing slots through Redis share it too.
   */
  nonces?: NonceStore;
  /** Largest acquire/release body; default 16 KiB. */
  bodyLimitBytes?: number;
  /** How long an acquire/release body may take to arrive (then 408); default 10 s. */
  bodyTimeoutMs?: number;
  /**
   * Web origins (`https://app.example`) whose pages may call the Lock API besides the
   * request's own; `*` admits any. Default none. Requests without `Origin` always pass.
   */
  corsOrigins?: readonly string[];
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
}
