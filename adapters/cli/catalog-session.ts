import type { CatalogService } from "../../src/catalog/catalog-service.js";
import { normalizeEmail } from "../../src/catalog/teams.js";
import type { TeamRecord, UserRecord } from "../../src/catalog/types.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { type CatalogDatabase, openCatalogDatabase } from "../server/catalog-database.js";
import { requireCatalogIn, resolveDataDir } from "../server/data-dir.js";
import { type CliIo, type OptionSpec, optionalString, type ParsedCommand } from "./command.js";

/** The `--data-dir` and `--database-url` flags shared by every command that touches the catalog. */
export const DATA_DIR_OPTION: Readonly<Record<"data-dir" | "database-url", OptionSpec>> = {
  "data-dir": {
    type: "string",
    placeholder: "<dir>",
    description: "Data directory (sluice.db). Default: $SLUICE_DATA_DIR or ./.sluice-data.",
  },
  "database-url": {
    type: "string",
    placeholder: "<postgres://…>",
    description:
      "A PostgreSQL catalog (as sluice serve --database-url) instead of the data directory. Default: $SLUICE_DATABASE_URL.",
  },
};

/** How long a command waits for a PostgreSQL that does not answer before giving up. */
const POSTGRES_WAIT_MS = 10_000;

/** {@link withCatalog} options of a command that only reads the catalog. */
export const READ_ONLY: Readonly<{ readOnly: true }> = Object.freeze({ readOnly: true });

/**
 * {@link withCatalog} options of a command that writes but seals and opens no secret (users,
 * roles, API tokens, key revocation): it runs on a PostgreSQL catalog without
 * `SLUICE_SECRET_KEY`, as a read-only command does.
 */
export const NO_SECRETS: Readonly<{ needsSecretKey: false }> = Object.freeze({
  needsSecretKey: false,
});

/** {@link withCatalog} option of `sluice team create`, the one command that starts a catalog. */
export const CREATES_CATALOG: Readonly<{ createsCatalog: true }> = Object.freeze({
  createsCatalog: true,
});

/**
 * Opens the command's catalog (`--database-url` / `SLUICE_DATABASE_URL`, else the data
 * directory), runs `work`, and closes it again. `work` also gets the whole database, for what
 * lives beside the catalog (dashboard sign-in: `authServiceFor(database)`). The directory must
 * hold a catalog already, unless the command starts one ({@link CREATES_CATALOG}); `readOnly`:
 * nothing is created, `secret.key` included. A PostgreSQL catalog needs `SLUICE_SECRET_KEY`
 * for a command that writes, unless it says it needs none ({@link NO_SECRETS}).
 *
 * @example
 * ```ts
 * run: (args, io) => withCatalog(args, io, async (catalog) => { io.out(String((await catalog.store.listAllPools()).length)); return 0; }),
 * ```
 */
export async function withCatalog(
  args: ParsedCommand,
  io: CliIo,
  work: (catalog: CatalogService, database: CatalogDatabase) => number | Promise<number>,
  options: { readOnly?: boolean; needsSecretKey?: boolean; createsCatalog?: boolean } = {},
): Promise<number> {
  const dataDir = resolveDataDir(optionalString(args, "data-dir"), io.env);
  const databaseUrl = databaseUrlOf(args, io);
  // Run in the wrong directory, a command would make an empty catalog there, then say that
  // the team or pool does not exist: the directory is the mistake to name.
  if (databaseUrl === undefined && options.createsCatalog !== true) requireCatalogIn(dataDir);
  const data = await openCatalogDatabase({
    dataDir,
    databaseUrl,
    secretKey: io.env.SLUICE_SECRET_KEY || undefined,
    // A command that only reads never leaves a fresh directory behind (a mistyped --data-dir).
    create: options.readOnly !== true,
    ...(options.needsSecretKey === undefined ? {} : { needsSecretKey: options.needsSecretKey }),
    waitMs: POSTGRES_WAIT_MS,
  });
  try {
    return await work(data.catalog, data);
  } finally {
    await data.close();
  }
}

function databaseUrlOf(args: ParsedCommand, io: CliIo): string | undefined {
  const flag = optionalString(args, "database-url");
  const url = (flag ?? (io.env.SLUICE_DATABASE_URL || undefined))?.trim();
  if (url === undefined) return undefined;
  const source = flag === undefined ? "SLUICE_DATABASE_URL" : "--database-url";
  if (!/^postgres(ql)?:\/\/\S+$/.test(url)) {
    throw new InvalidArgumentError(`${source} must be a postgres:// or postgresql:// URL.`);
  }
  // As `sluice serve` checks it: a port out of range or a broken host is named at once, not
  // found by the driver ten seconds of retries later as a bare "Invalid URL".
  if (!URL.canParse(url)) {
    throw new InvalidArgumentError(
      `${source} is not a valid URL: check its host and its port (1 to 65535).`,
    );
  }
  return url;
}

/**
 * The team with this slug, or an {@link InvalidArgumentError} that says how to create it.
 *
 * @example
 * ```ts
 * const team = await requireTeam(catalog, "acme");
 * ```
 */
export async function requireTeam(catalog: CatalogService, slug: string): Promise<TeamRecord> {
  const team = await catalog.store.findTeamBySlug(slug);
  if (!team) {
    throw new InvalidArgumentError(
      `No team with slug "${slug}". Create it with "sluice team create".`,
    );
  }
  return team;
}

/**
 * The user with this email who belongs to the team, or an {@link InvalidArgumentError}.
 *
 * @example
 * ```ts
 * const user = await requireMember(catalog, team, "ada@example.com");
 * ```
 */
export async function requireMember(
  catalog: CatalogService,
  team: TeamRecord,
  email: string,
): Promise<UserRecord> {
  const user = await catalog.store.findUserByEmail(normalizeEmail(email));
  if (!user || !(await catalog.store.getMembership(team.id, user.id))) {
    throw new InvalidArgumentError(
      `${email} is not a member of team ${team.slug}. Add them with "sluice user add".`,
    );
  }
  return user;
}
