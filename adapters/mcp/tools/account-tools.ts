import * as v from "valibot";
import { TeamSchema, UserSchema } from "../../hono/control/resource-schemas.js";
import { serializeTeam, serializeUser } from "../../hono/control/serializers.js";
import { OAUTH_SCOPES } from "../../oauth/scopes.js";
import { defineTool, READ_ONLY, ToolRefusal } from "../tool-kit.js";

/** `whoami`: the signed-in user, their team and role, and this connection's scopes. */
export const whoamiTool = defineTool({
  name: "whoami",
  title: "Who am I",
  description: "The user and team this assistant acts for, their role and the scopes granted.",
  scope: null,
  annotations: READ_ONLY,
  input: v.object({}),
  output: v.object({
    user: UserSchema,
    team: TeamSchema,
    role: v.picklist(["owner", "admin", "member"]),
    scopes: v.array(v.picklist(OAUTH_SCOPES)),
  }),
  async run(_args, access, deps) {
    const store = deps.catalog.store;
    const user = await store.getUser(access.userId);
    const team = await store.getTeam(access.teamId);
    const membership = await store.getMembership(access.teamId, access.userId);
    if (!user || !team || !membership) throw new ToolRefusal("The account is gone.");
    return {
      user: serializeUser(user),
      team: serializeTeam(team),
      role: membership.role,
      scopes: [...access.scopes],
    };
  },
});
