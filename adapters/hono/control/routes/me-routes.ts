import { Hono } from "hono";
import { apiTokenAuth } from "../api-token-auth.js";
import type { ControlEnv, ControlRouteDeps } from "../control-env.js";
import type { MeResponse } from "../resource-schemas.js";
import { serializeTeam, serializeUser } from "../serializers.js";

/**
 * `GET /me`: the token's user, team and abilities. Any valid token may call it.
 *
 * @example
 * ```ts
 * api.route("/", meRoutes(deps));
 * ```
 */
export function meRoutes(deps: ControlRouteDeps): Hono<ControlEnv> {
  const routes = new Hono<ControlEnv>();
  routes.get("/me", apiTokenAuth(deps.catalog), (c) => {
    const { user, team, abilities } = c.var.auth;
    const body: MeResponse = {
      user: serializeUser(user),
      team: serializeTeam(team),
      abilities: [...abilities],
    };
    return c.json(body);
  });
  return routes;
}
