import { endAccessInTeam } from "../../../src/auth/member-changes.js";
import type { CatalogService } from "../../../src/catalog/catalog-service.js";
import { normalizeEmail } from "../../../src/catalog/teams.js";
import type { Role } from "../../../src/catalog/types.js";
import { InvalidArgumentError } from "../../../src/errors.js";
import type { CatalogDatabase } from "../../server/catalog-database.js";
import { DATA_DIR_OPTION, NO_SECRETS, requireTeam, withCatalog } from "../catalog-session.js";
import { authServiceFor } from "../cli-auth.js";
import {
  type CliIo,
  type CommandSpec,
  optionalString,
  type ParsedCommand,
  requiredString,
  withFlagNames,
} from "../command.js";

/**
 * `sluice user add`: adds a user to a team, or changes their role.
 *
 * @example
 * ```ts
 * await runCli(["user", "add", "--team", "acme", "--name", "Bo", "--email", "bo@example.com", "--role", "admin"], io);
 * ```
 */
export const userAddCommand: CommandSpec = {
  name: "user add",
  summary: "Add a user to a team (or change their role there).",
  options: {
    team: {
      type: "string",
      placeholder: "<slug>",
      description: "The team's slug.",
      required: true,
    },
    name: {
      type: "string",
      placeholder: "<name>",
      description: "The user's name: required for a new user; a user already known keeps theirs.",
    },
    email: {
      type: "string",
      placeholder: "<email>",
      description: "The user's email; an existing user with it is reused.",
      required: true,
    },
    role: {
      type: "string",
      placeholder: "owner|admin|member",
      description:
        "Role in the team; owners and admins may manage API tokens. Default: member for a new member, the current role for one already in the team.",
    },
    ...DATA_DIR_OPTION,
  },
  details: [
    "Run it again with another --role to change a member's role. The team's only owner cannot step down: make another member owner first. " +
      "Lowering an owner or admin to member ends their dashboard sessions and revokes their API tokens in the team.",
  ],
  examples: [
    'sluice user add --team acme --name "Grace Hopper" --email grace@example.com --role admin',
  ],
  run: (args, io) =>
    withCatalog(args, io, (catalog, database) => addUser(args, io, catalog, database), NO_SECRETS),
};

async function addUser(
  args: ParsedCommand,
  io: CliIo,
  catalog: CatalogService,
  database: CatalogDatabase,
): Promise<number> {
  const team = await requireTeam(catalog, requiredString(args, "team"));
  const email = requiredString(args, "email");
  const known = await catalog.store.findUserByEmail(normalizeEmail(email));
  const before = known && (await catalog.store.getMembership(team.id, known.id));
  // Without --role a member keeps the role they have: re-adding must not demote.
  const role = (optionalString(args, "role") ?? before?.role ?? "member") as Role;
  const name = optionalString(args, "name");
  if (name === undefined && !known) {
    throw new InvalidArgumentError(
      `${email} is a new user: give their name with --name (needed only the first time).`,
    );
  }
  const { user } = await withFlagNames({ name: "name", email: "email", role: "role" }, () =>
    catalog.addMember(team.id, { name: name ?? known!.name, email }, role),
  );
  const who = `${user.email} (user id ${user.id})`;
  if (!before) io.out(`Added ${who} to team ${team.slug} as ${role}.`);
  else if (before.role === role) io.out(`${who} is already ${role} of team ${team.slug}.`);
  else io.out(`Changed the role of ${who} in team ${team.slug}: ${before.role} → ${role}.`);
  if (before && before.role !== "member" && role === "member") {
    // Members hold no tokens and change nothing: what they could do as owner or admin ends now.
    const { store, secretBox, clock } = catalog;
    await endAccessInTeam(
      { store, secretBox, clock, auth: authServiceFor(database) },
      team.id,
      user.id,
    );
    io.out("Ended their dashboard sessions and revoked their API tokens in the team.");
  }
  // Users are shared by teams: one team's `user add` does not rename them for the others.
  if (known && name !== undefined && known.name !== name.trim()) {
    io.out(`Kept the name "${known.name}": a user's name is set when they are first added.`);
  }
  return 0;
}
