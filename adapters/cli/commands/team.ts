import { CREATES_CATALOG, DATA_DIR_OPTION, NO_SECRETS, withCatalog } from "../catalog-session.js";
import { type CommandSpec, optionalString, requiredString, withFlagNames } from "../command.js";

const TEAM_FLAGS = {
  teamName: "name",
  slug: "slug",
  ownerName: "owner-name",
  ownerEmail: "owner-email",
};

/** `value` as one shell word, so the printed command can be pasted as it is (a path with spaces). */
function shellWord(value: string): string {
  return /^[\w./:@%+=,-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * `sluice team create`: creates a team and its owner (an existing user is matched by email).
 *
 * @example
 * ```ts
 * await runCli(["team", "create", "--name", "Acme", "--slug", "acme", "--owner-name", "Ada", "--owner-email", "ada@example.com"], io);
 * ```
 */
export const teamCreateCommand: CommandSpec = {
  name: "team create",
  summary: "Create a team (organization) and its owner.",
  options: {
    name: {
      type: "string",
      placeholder: "<name>",
      description: "Display name of the team.",
      required: true,
    },
    slug: {
      type: "string",
      placeholder: "<slug>",
      description: "Short unique id: lower-case letters, digits, hyphens.",
      required: true,
    },
    "owner-name": {
      type: "string",
      placeholder: "<name>",
      description: "The owner's name.",
      required: true,
    },
    "owner-email": {
      type: "string",
      placeholder: "<email>",
      description: "The owner's email; an existing user with it becomes the owner.",
      required: true,
    },
    ...DATA_DIR_OPTION,
  },
  details: ["The owner may create API tokens for the team (sluice token create)."],
  examples: [
    'sluice team create --name "Acme" --slug acme --owner-name "Ada Lovelace" --owner-email ada@example.com',
  ],
  run: (args, io) =>
    withCatalog(
      args,
      io,
      async (catalog) => {
        const { team, owner } = await withFlagNames(TEAM_FLAGS, () =>
          catalog.createTeamWithOwner({
            teamName: requiredString(args, "name"),
            slug: requiredString(args, "slug"),
            ownerName: requiredString(args, "owner-name"),
            ownerEmail: requiredString(args, "owner-email"),
          }),
        );
        io.out(`Created team ${team.slug} (id ${team.id}) with owner ${owner.email}.`);
        // A running server needs no restart: the link goes into the shared database.
        const dataDir = optionalString(args, "data-dir");
        io.out(
          `A dashboard sign-in link for the owner, any time: sluice user sign-in-link --email ${owner.email}${dataDir ? ` --data-dir ${shellWord(dataDir)}` : ""}`,
        );
        return 0;
      },
      { ...NO_SECRETS, ...CREATES_CATALOG },
    ),
};
