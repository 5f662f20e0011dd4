import type { CatalogDeps } from "./catalog-deps.js";
import { plainTextIssues } from "./plain-text.js";
import type { MembershipRecord, Role, TeamRecord, UserRecord } from "./types.js";
import { characterCount, fieldIssue, throwIfIssues } from "./validation.js";

const ROLES: readonly Role[] = ["owner", "admin", "member"];
const NAME_MAX = 100;
/** A DNS-label-like slug: it may end up in URLs and host names. */
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Deliberately loose: one "@", something on both sides, a dot in the domain. Delivery is the real check. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface NewTeamWithOwner {
  teamName: string;
  slug: string;
  ownerName: string;
  ownerEmail: string;
}

export interface TeamWithOwner {
  team: TeamRecord;
  owner: UserRecord;
  membership: MembershipRecord;
}

export interface NewMember {
  name: string;
  email: string;
}

/**
 * Emails compare case-insensitively in practice; store them one way so lookups match.
 *
 * @example
 * ```ts
 * store.findUserByEmail(normalizeEmail(" Ada@Acme.test ")); // looks up "ada@acme.test"
 * ```
 */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function nameIssues(field: string, value: unknown): string[] {
  if (typeof value !== "string" || value.trim() === "") return [fieldIssue(field, "Required.")];
  if (characterCount(value.trim()) > NAME_MAX) {
    return [fieldIssue(field, `Must be at most ${NAME_MAX} characters.`)];
  }
  return plainTextIssues(field, value.trim());
}

function emailIssues(field: string, value: unknown): string[] {
  if (typeof value !== "string" || !EMAIL.test(value.trim())) {
    return [fieldIssue(field, "Must be an email address.")];
  }
  return plainTextIssues(field, value.trim());
}

/** Finds the user by email (users may belong to several teams) or creates them. */
async function findOrCreateUser(
  deps: CatalogDeps,
  name: string,
  email: string,
): Promise<UserRecord> {
  const normalized = normalizeEmail(email);
  return (
    (await deps.store.findUserByEmail(normalized)) ??
    (await deps.store.createUser({ name: name.trim(), email: normalized }))
  );
}

/**
 * What is wrong with a new team and its owner, as `"field: message"` issues (`teamName`,
 * `slug`, `ownerName`, `ownerEmail`); empty when nothing is. A taken slug is not checked here.
 *
 * @example
 * ```ts
 * teamWithOwnerIssues({ teamName: "Acme", slug: "Acme", ownerName: "Ada", ownerEmail: "ada@acme.test" });
 * // ["slug: Use 1-63 lower-case letters, digits and inner hyphens."]
 * ```
 */
export function teamWithOwnerIssues(input: NewTeamWithOwner): string[] {
  return [
    ...nameIssues("teamName", input.teamName),
    ...(typeof input.slug === "string" && SLUG.test(input.slug)
      ? []
      : [fieldIssue("slug", "Use 1-63 lower-case letters, digits and inner hyphens.")]),
    ...nameIssues("ownerName", input.ownerName),
    ...emailIssues("ownerEmail", input.ownerEmail),
  ];
}

/**
 * Creates a team and makes a (new or existing, matched by email) user its owner.
 * A taken slug is a ConflictError from the store; bad input is an InvalidArgumentError
 * whose issues name the fields (`teamName`, `slug`, `ownerName`, `ownerEmail`).
 *
 * @example
 * ```ts
 * const { team, owner } = await createTeamWithOwner(deps, {
 *   teamName: "Acme", slug: "acme", ownerName: "Ada", ownerEmail: "ada@acme.test",
 * });
 * ```
 */
export async function createTeamWithOwner(
  deps: CatalogDeps,
  input: NewTeamWithOwner,
): Promise<TeamWithOwner> {
  throwIfIssues("team", teamWithOwnerIssues(input));
  // One unit: a team is never left without its owner.
  return deps.store.atomically(async (store) => {
    const unit = { ...deps, store };
    const team = await store.createTeam({ name: input.teamName.trim(), slug: input.slug });
    const owner = await findOrCreateUser(unit, input.ownerName, input.ownerEmail);
    const membership: MembershipRecord = { teamId: team.id, userId: owner.id, role: "owner" };
    await store.setMembership(membership);
    return { team, owner, membership };
  });
}

/**
 * Adds a (new or existing, matched by email) user to a team, or changes their role. The
 * team's only owner keeps that role (an `InvalidArgumentError` on `role`): a team without an
 * owner could never mint an API token again. Make another member owner first.
 *
 * @example
 * ```ts
 * await addMember(deps, team.id, { name: "Bo", email: "bo@acme.test" }, "member");
 * ```
 */
export async function addMember(
  deps: CatalogDeps,
  teamId: number,
  user: NewMember,
  role: Role,
): Promise<{ user: UserRecord; membership: MembershipRecord }> {
  const issues = [
    ...((await deps.store.getTeam(teamId)) ? [] : [fieldIssue("teamId", "Unknown team.")]),
    ...nameIssues("name", user.name),
    ...emailIssues("email", user.email),
    ...(ROLES.includes(role) ? [] : [fieldIssue("role", `Must be one of ${ROLES.join(", ")}.`)]),
  ];
  throwIfIssues("member", issues);
  const existing = await deps.store.findUserByEmail(normalizeEmail(user.email));
  if (existing && role !== "owner" && (await isOnlyOwner(deps, teamId, existing.id))) {
    const message = "The team's only owner cannot step down; make another member owner first.";
    throwIfIssues("member", [fieldIssue("role", message)]);
  }
  const member = await findOrCreateUser(deps, user.name, user.email);
  const membership: MembershipRecord = { teamId, userId: member.id, role };
  await deps.store.setMembership(membership);
  return { user: member, membership };
}

async function isOnlyOwner(deps: CatalogDeps, teamId: number, userId: number): Promise<boolean> {
  const owners = (await deps.store.listMemberships(teamId)).filter((m) => m.role === "owner");
  return owners.length === 1 && owners[0]!.userId === userId;
}
