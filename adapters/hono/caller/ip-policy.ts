import type { PoolRecord } from "../../../src/catalog/types.js";

/**
 * An IP policy hook of the embedding application, beside the pools' own `ipAllowlist`:
 * false refuses the caller with 403 `unauthorized` (contract section 7). It sees the
 * socket's address, on every lock route and proxied request.
 */
export type IpPolicy = (pool: PoolRecord, remoteAddress: string | null) => boolean;
