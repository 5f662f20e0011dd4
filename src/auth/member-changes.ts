import type { CatalogDeps } from "../catalog/catalog-deps.js";
import type { MembershipRecord, Role } from "../catalog/types.js";
import { fieldIssue, throwIfIssues } from "../catalog/validation.js";
import { ForbiddenError, InvalidArgumentError } from "../errors.js";
import type { AuthService } from "./auth-service.js";

/** What membership changes run on: the catalog rules, and the sessions and apps to end. */
export interface MemberChangeDeps extends CatalogDeps {
  auth: Pick<AuthService, "endSessionsIn" | "endConnectedAppsIn">;
}

/** Who changes whose membership in which team. */
export interface MemberChange {
  teamId: number;
  /** Who asks: an owner or admin of the team. */
  actorUserId: number;
  userId: number;
}

const ROLES: readonly Role[] = ["owner", "admin", "member"];

async function checkChange(
  deps: MemberChangeDeps,
  change: MemberChange,
): Promise<MembershipRecord> {
  const actor = await deps.store.getMembership(change.teamId, change.actorUserId);
  if (!actor || actor.role === "member") {
    throw new ForbiddenError("Only owners and admins may change the team's members.");
  }
  const target = await deps.store.getMembership(change.teamId, change.userId);
  if (!target)
    throw new InvalidArgumentError("userId: Not a member of the team.", [
      "userId: Not a member of the team.",
    ]);
  if (target.role === "owner" && actor.role !== "owner") {
    throw new ForbiddenError("Only an owner may change or remove another owner.");
  }
  return target;
}

async function isLastOwner(
  deps: MemberChangeDeps,
  teamId: number,
  userId: number,
): Promise<boolean> {
  const owners = (await deps.store.listMemberships(teamId)).filter((m) => m.role === "owner");
  return owners.length === 1 && owners[0]!.userId === userId;
}

/**
 * Whatever the person could do through the team ends now: their sessions in it, and their
 * API tokens there (a token acts as its creator; it must not come back if they rejoin).
 * Called by {@link removeMember} and {@link changeMemberRole}; an operator tool that lowers a
 * member another way (`sluice user add --role member`) calls it too.
 *
 * @example
 * ```ts
 * await endAccessInTeam(deps, team.id, user.id);
 * ```
 */
export async function endAccessInTeam(
  deps: MemberChangeDeps,
  teamId: number,
  userId: number,
): Promise<void> {
  const now = deps.clock.now();
  for (const token of await deps.store.listApiTokens(teamId)) {
    if (token.userId === userId && token.revokedAt === null) {
      await deps.store.revokeApiToken(teamId, token.id, now);
    }
  }
  await deps.auth.endSessionsIn(teamId, userId);
}

/**
 * Removes a member from the team (owners and admins; only an owner removes an owner), ending
 * their sessions and revoking their API tokens and connected apps (MCP clients) there at
 * once: none of them comes back if they rejoin. The last owner stays.
 *
 * @example
 * ```ts
 * await removeMember(deps, { teamId, actorUserId: owner.id, userId: leaver.id });
 * ```
 */
export async function removeMember(deps: MemberChangeDeps, change: MemberChange): Promise<void> {
  await checkChange(deps, change);
  if (await isLastOwner(deps, change.teamId, change.userId)) {
    throwIfIssues("member", [
      fieldIssue(
        "userId",
        "The team's last owner cannot be removed; make another member owner first.",
      ),
    ]);
  }
  await deps.store.removeMembership(change.teamId, change.userId);
  await endAccessInTeam(deps, change.teamId, change.userId);
  // Lowered to member, an app keeps the scopes a member may use; removed, it ends.
  await deps.auth.endConnectedAppsIn(change.teamId, change.userId);
}

/**
 * Changes a member's role (owners and admins; only an owner grants or takes the owner role).
 * Lowered to member, they lose their sessions and API tokens in the team at once (members
 * may not hold tokens). The last owner keeps the role.
 *
 * @example
 * ```ts
 * await changeMemberRole(deps, { teamId, actorUserId: owner.id, userId: bo.id, role: "admin" });
 * ```
 */
export async function changeMemberRole(
  deps: MemberChangeDeps,
  change: MemberChange & { role: Role },
): Promise<MembershipRecord> {
  if (!ROLES.includes(change.role)) {
    throwIfIssues("member", [fieldIssue("role", `Must be one of ${ROLES.join(", ")}.`)]);
  }
  const target = await checkChange(deps, change);
  const actor = await deps.store.getMembership(change.teamId, change.actorUserId);
  if (change.role === "owner" && actor?.role !== "owner") {
    throw new ForbiddenError("Only an owner may make someone owner.");
  }
  if (
    target.role === "owner" &&
    change.role !== "owner" &&
    (await isLastOwner(deps, change.teamId, change.userId))
  ) {
    throwIfIssues("member", [
      fieldIssue(
        "role",
        "The team's last owner cannot step down; make another member owner first.",
      ),
    ]);
  }
  const membership: MembershipRecord = { ...target, role: change.role };
  await deps.store.setMembership(membership);
  if (change.role === "member" && target.role !== "member") {
    await endAccessInTeam(deps, change.teamId, change.userId);
  }
  return membership;
}
