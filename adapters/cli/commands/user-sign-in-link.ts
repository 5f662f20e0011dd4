import type { CatalogService } from "../../../src/catalog/catalog-service.js";
import { normalizeEmail } from "../../../src/catalog/teams.js";
import type { TeamRecord } from "../../../src/catalog/types.js";
import { InvalidArgumentError } from "../../../src/errors.js";
import { loadServerConfig } from "../../server/config.js";
import { resolveDataDir } from "../../server/data-dir.js";
import { recordedServerUrl } from "../../server/server-url-file.js";
import {
  DATA_DIR_OPTION,
  NO_SECRETS,
  requireMember,
  requireTeam,
  withCatalog,
} from "../catalog-session.js";
import { authServiceFor } from "../cli-auth.js";
import {
  type CliIo,
  type CommandSpec,
  optionalString,
  type ParsedCommand,
  requiredString,
} from "../command.js";

/** The team the link signs into: `--team`, else the user's first team (as a password sign-in). */
async function teamFor(
  catalog: CatalogService,
  email: string,
  slug: string | undefined,
): Promise<TeamRecord> {
  if (slug !== undefined) return await requireTeam(catalog, slug);
  const user = await catalog.store.findUserByEmail(normalizeEmail(email));
  for (const team of user ? await catalog.store.listTeams() : []) {
    if (await catalog.store.getMembership(team.id, user!.id)) return team;
  }
  throw new InvalidArgumentError(
    `${email} is in no team. Add them with "sluice user add", or create one with "sluice team create".`,
  );
}

/**
 * Where the last `sluice serve` on the data directory answered, unless SLUICE_BASE_URL says
 * where the server is or the catalog is in PostgreSQL (a fleet has no one directory).
 */
function recordedBaseUrl(args: ParsedCommand, env: CliIo["env"]): string | undefined {
  if (env.SLUICE_BASE_URL || optionalString(args, "database-url") || env.SLUICE_DATABASE_URL) {
    return undefined;
  }
  return recordedServerUrl(resolveDataDir(optionalString(args, "data-dir"), env)) ?? undefined;
}

/**
 * `sluice user sign-in-link`: writes a one-time dashboard sign-in link into the data
 * directory's database and prints it; a running `sluice serve` on that directory accepts it
 * at once (no restart).
 *
 * @example
 * ```ts
 * await runCli(["user", "sign-in-link", "--email", "ada@example.com", "--base-url", "https://sluice.example.com"], io);
 * ```
 */
export const userSignInLinkCommand: CommandSpec = {
  name: "user sign-in-link",
  summary: "Print a one-time dashboard sign-in link for a user.",
  options: {
    email: {
      type: "string",
      placeholder: "<email>",
      description: "The user's email.",
      required: true,
    },
    team: {
      type: "string",
      placeholder: "<slug>",
      description: "The team to sign in to. Default: the user's first team.",
    },
    "base-url": {
      type: "string",
      placeholder: "<url>",
      description:
        "The server's public URL, as given to sluice serve. Default: $SLUICE_BASE_URL, else the URL the last sluice serve on the data directory answered at, else http://localhost:$SLUICE_PORT (8080).",
    },
    ...DATA_DIR_OPTION,
  },
  details: [
    "The link works once, within 15 minutes, on any server using the same data directory (or catalog database). " +
      "Anyone holding it signs in as the user: hand it over as you would a password. " +
      "Afterwards set a password on the Account page, or with sluice user set-password.",
  ],
  examples: [
    "sluice user sign-in-link --email ada@example.com",
    "sluice user sign-in-link --email ada@example.com --team acme --base-url https://sluice.example.com",
  ],
  run: (args, io) => {
    const email = requiredString(args, "email");
    const baseUrl = optionalString(args, "base-url") ?? recordedBaseUrl(args, io.env);
    // The same rules and default as sluice serve's own base URL.
    const config = loadServerConfig({ flags: baseUrl ? { baseUrl } : {}, env: io.env });
    return withCatalog(
      args,
      io,
      async (catalog, database) => {
        const team = await teamFor(catalog, email, optionalString(args, "team"));
        const user = await requireMember(catalog, team, email);
        const auth = authServiceFor(database);
        const { token } = await auth.createSignInLink(team.id, user.id);
        const minutes = Math.round(auth.policy.linkTtlMs / 60_000);
        io.out(
          `Sign in to team ${team.slug} as ${user.email} (works once, within ${minutes} minutes):`,
        );
        io.out(`  ${config.baseUrl.replace(/\/$/, "")}/sign-in/link?token=${token}`);
        if (database.dataDir === null && !baseUrl && !io.env.SLUICE_BASE_URL) {
          // A fleet's URL is recorded nowhere: a link to localhost would reach no server of it.
          io.err(
            `Note: the link starts with ${config.baseUrl}, the default; give the fleet's URL with --base-url or SLUICE_BASE_URL.`,
          );
        }
        return 0;
      },
      NO_SECRETS,
    );
  },
};
