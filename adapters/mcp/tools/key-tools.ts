import * as v from "valibot";
import { PoolKeyNotFoundError } from "../../hono/control/errors.js";
import { PoolKeyCreateRequestSchema } from "../../hono/control/request-schemas.js";
import { PoolKeySchema } from "../../hono/control/resource-schemas.js";
import { serializeMintedPoolKey, serializePoolKey } from "../../hono/control/serializers.js";
import { defineTool, READ_ONLY } from "../tool-kit.js";
import { PoolArgument, wholeNumberArgument } from "./schemas.js";
import { teamPool } from "./team-pool.js";

/** `list_pool_keys`: a pool's keys, metadata only (never a key or a secret). */
export const listPoolKeysTool = defineTool({
  name: "list_pool_keys",
  title: "List a pool's keys",
  description:
    "A pool's keys: label, last four characters, access, expiry, revocation. No secrets.",
  scope: "pools:read",
  annotations: READ_ONLY,
  input: v.object({ pool: PoolArgument }),
  output: v.object({ keys: v.array(PoolKeySchema) }),
  async run(args, access, deps) {
    const pool = await teamPool(deps, access, args.pool);
    const keys = await deps.catalog.store.listPoolKeys(pool.id);
    return { keys: keys.map((key) => serializePoolKey(pool, key)) };
  },
});

/** `mint_pool_key`: a new key; its plaintext is in this answer only. */
export const mintPoolKeyTool = defineTool({
  name: "mint_pool_key",
  title: "Mint a pool key",
  description:
    "Creates a key for a pool (access read or write, optional expiry). The plaintext key is shown once, in this answer.",
  scope: "keys:write",
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  input: v.object({ pool: PoolArgument, ...PoolKeyCreateRequestSchema.entries }),
  output: v.object({ key: PoolKeySchema }),
  async run(args, access, deps) {
    const pool = await teamPool(deps, access, args.pool);
    const minted = await deps.catalog.mintPoolKey({
      teamId: access.teamId,
      subdomain: pool.subdomain,
      label: args.label,
      access: args.access,
      expiresPreset: args.expires_preset,
      expiresAt: args.expires_at,
    });
    return { key: serializeMintedPoolKey(pool, minted) };
  },
});

/** `revoke_pool_key`: revokes a key at once; callers using it are refused from then on. */
export const revokePoolKeyTool = defineTool({
  name: "revoke_pool_key",
  title: "Revoke a pool key",
  description: "Revokes one of a pool's keys at once: callers using it are refused from then on.",
  scope: "keys:write",
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  input: v.object({
    pool: PoolArgument,
    key_id: wholeNumberArgument(
      "key_id",
      1,
      Number.MAX_SAFE_INTEGER,
      "The key's id, as list_pool_keys shows it.",
    ),
  }),
  output: v.object({ key: PoolKeySchema }),
  async run(args, access, deps) {
    const pool = await teamPool(deps, access, args.pool);
    const revoked = await deps.catalog.revokePoolKey(access.teamId, pool.subdomain, args.key_id);
    if (!revoked) throw new PoolKeyNotFoundError(String(args.key_id));
    return { key: serializePoolKey(pool, revoked) };
  },
});
