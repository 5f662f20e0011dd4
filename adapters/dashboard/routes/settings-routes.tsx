import { Hono } from "hono";
import { changeMemberRole, removeMember } from "../../../src/auth/member-changes.js";
import { normalizeEmail } from "../../../src/catalog/teams.js";
import type { CreatedApiToken } from "../../../src/catalog/tokens.js";
import type { Role, TokenLifetime } from "../../../src/catalog/types.js";
import type { DashboardContext, DashboardDeps, DashboardEnv } from "../dashboard-env.js";
import { type FieldErrorMap, fieldErrorsOf, formList, formText, readForm } from "../forms.js";
import { type MemberRow, type MemberRowErrors, MembersPage } from "../pages/members-page.js";
import { TokensPage } from "../pages/tokens-page.js";

/** Organization settings: API tokens and members. */
export function settingsRoutes(deps: DashboardDeps): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();
  const store = deps.catalog.store;
  const memberDeps = {
    store,
    secretBox: deps.catalog.secretBox,
    clock: deps.clock,
    auth: deps.auth,
  };

  async function tokensPage(
    c: DashboardContext,
    extra: { created?: CreatedApiToken; errors?: FieldErrorMap } = {},
    status: 200 | 201 | 422 = 200,
  ) {
    const teamId = c.var.signedIn.team.id;
    const tokens = await store.listApiTokens(teamId);
    const names = new Map<number, string>();
    for (const token of tokens) {
      if (!names.has(token.userId))
        names.set(
          token.userId,
          (await store.getUser(token.userId))?.name ?? `user ${token.userId}`,
        );
    }
    return c.html(
      <TokensPage
        signedIn={c.var.signedIn}
        tokens={tokens}
        creators={names}
        now={deps.clock.now()}
        {...extra}
      />,
      status,
    );
  }

  routes.get("/settings/tokens", (c) => tokensPage(c));

  routes.post("/settings/tokens", async (c) => {
    const form = await readForm(c);
    let created: CreatedApiToken | undefined;
    const errors = await fieldErrorsOf(async () => {
      created = await deps.catalog.createApiToken({
        teamId: c.var.signedIn.team.id,
        actorUserId: c.var.signedIn.user.id,
        name: formText(form, "name"),
        abilities: formList(form, "abilities"),
        lifetime: formText(form, "lifetime") as TokenLifetime,
      });
    });
    if (errors) return tokensPage(c, { errors }, 422);
    return tokensPage(c, { created: created! }, 201);
  });

  routes.post("/settings/tokens/:id/revoke", async (c) => {
    const tokenId = Number(c.req.param("id"));
    const revoked = Number.isSafeInteger(tokenId)
      ? await deps.catalog.revokeApiToken({
          teamId: c.var.signedIn.team.id,
          actorUserId: c.var.signedIn.user.id,
          tokenId,
        })
      : undefined;
    if (!revoked) return c.notFound();
    return c.redirect("/settings/tokens", 303);
  });

  async function membersPage(
    c: DashboardContext,
    errors?: FieldErrorMap,
    status: 200 | 409 | 422 = 200,
    added?: { name: string; email: string; role: string },
    rowErrors?: MemberRowErrors,
  ) {
    const rows: MemberRow[] = [];
    for (const membership of await store.listMemberships(c.var.signedIn.team.id)) {
      const user = await store.getUser(membership.userId);
      if (user) rows.push({ user, role: membership.role });
    }
    return c.html(
      <MembersPage
        signedIn={c.var.signedIn}
        members={rows}
        errors={errors}
        added={added}
        rowErrors={rowErrors}
      />,
      status,
    );
  }

  routes.get("/settings/members", (c) => membersPage(c));

  routes.post("/settings/members", async (c) => {
    const form = await readForm(c);
    const teamId = c.var.signedIn.team.id;
    const input = {
      name: formText(form, "name"),
      email: formText(form, "email"),
      role: formText(form, "role"),
    };
    const known = await store.findUserByEmail(normalizeEmail(input.email));
    if (known && (await store.getMembership(teamId, known.id))) {
      return membersPage(
        c,
        { email: ["Already a member: change their role in the list."] },
        409,
        input,
      );
    }
    if (input.role === "owner" && c.var.signedIn.role !== "owner") {
      return membersPage(c, { role: ["Only an owner may make someone owner."] }, 422, input);
    }
    const errors = await fieldErrorsOf(async () =>
      deps.catalog.addMember(teamId, { name: input.name, email: input.email }, input.role as Role),
    );
    if (errors) return membersPage(c, errors, 422, input);
    return c.redirect("/settings/members", 303);
  });

  async function change(c: DashboardContext, work: (userId: number) => Promise<unknown>) {
    const userId = Number(c.req.param("user"));
    if (
      !Number.isSafeInteger(userId) ||
      !(await store.getMembership(c.var.signedIn.team.id, userId))
    )
      return c.notFound();
    const errors = await fieldErrorsOf(() => work(userId));
    // Shown in that member's row: below the list it read as the add form's error.
    if (errors) return membersPage(c, undefined, 422, undefined, { userId, errors });
    // Lowering or removing oneself ends one's own session: the next page is the sign-in.
    return c.redirect("/settings/members", 303);
  }

  routes.post("/settings/members/:user/role", async (c) => {
    const role = formText(await readForm(c), "role") as Role;
    return change(c, (userId) =>
      changeMemberRole(memberDeps, {
        teamId: c.var.signedIn.team.id,
        actorUserId: c.var.signedIn.user.id,
        userId,
        role,
      }),
    );
  });

  routes.post("/settings/members/:user/remove", (c) =>
    change(c, (userId) =>
      removeMember(memberDeps, {
        teamId: c.var.signedIn.team.id,
        actorUserId: c.var.signedIn.user.id,
        userId,
      }),
    ),
  );
  return routes;
}
