import { Hono } from "hono";
import { apiTokenAuth } from "../api-token-auth.js";
import type { ControlEnv, ControlRouteDeps } from "../control-env.js";
import { PoolKeyNotFoundError } from "../errors.js";
import { parseInput, readOptionalJsonObject } from "../request-input.js";
import { PoolKeyCreateRequestSchema } from "../request-schemas.js";
import { serializeMintedPoolKey, serializePoolKey } from "../serializers.js";
import { parsePathId, requireTeamPool } from "../team-lookups.js";

/**
 * `POST /pools/{pool}/keys` and `DELETE /pools/{pool}/keys/{apiKey}` (keys:write), and
 * `GET /pools/{pool}/keys`, an extension outside the contract's table so a lost key id can be
 * found and revoked. The pool is resolved before the body is read, so another team's pool is
 * a 404 whatever the body. The plaintext key (and signing secret) appear in the creation
 * response only; the list carries metadata, never a hash or a secret.
 *
 * @example
 * ```ts
 * api.route("/", poolKeyRoutes(deps));
 * ```
 */
export function poolKeyRoutes(deps: ControlRouteDeps): Hono<ControlEnv> {
  const { catalog } = deps;
  const routes = new Hono<ControlEnv>();

  routes.get("/pools/:pool/keys", apiTokenAuth(catalog, "keys:write"), async (c) => {
    const pool = await requireTeamPool(catalog.store, c.var.auth.team.id, c.req.param("pool"));
    const keys = await catalog.store.listPoolKeys(pool.id);
    return c.json({ data: keys.map((key) => serializePoolKey(pool, key)) });
  });

  routes.post("/pools/:pool/keys", apiTokenAuth(catalog, "keys:write"), async (c) => {
    const teamId = c.var.auth.team.id;
    const pool = await requireTeamPool(catalog.store, teamId, c.req.param("pool"));
    const input = await readOptionalJsonObject(c.req.raw, deps.bodyLimits, c.env);
    const body = parseInput(PoolKeyCreateRequestSchema, input);
    const minted = await catalog.mintPoolKey({
      teamId,
      subdomain: pool.subdomain,
      label: body.label,
      access: body.access,
      expiresPreset: body.expires_preset,
      expiresAt: body.expires_at,
    });
    return c.json({ data: serializeMintedPoolKey(pool, minted) }, 201);
  });

  routes.delete("/pools/:pool/keys/:apiKey", apiTokenAuth(catalog, "keys:write"), async (c) => {
    const teamId = c.var.auth.team.id;
    const pool = await requireTeamPool(catalog.store, teamId, c.req.param("pool"));
    const segment = c.req.param("apiKey");
    const keyId = parsePathId(segment);
    const revoked =
      keyId === null ? undefined : await catalog.revokePoolKey(teamId, pool.subdomain, keyId);
    if (!revoked) throw new PoolKeyNotFoundError(segment);
    return c.json({ data: serializePoolKey(pool, revoked) });
  });

  return routes;
}
