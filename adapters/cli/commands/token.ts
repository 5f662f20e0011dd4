import { ABILITIES, type ApiTokenRecord } from "../../../src/catalog/types.js";
import { InvalidArgumentError } from "../../../src/errors.js";
import {
  DATA_DIR_OPTION,
  NO_SECRETS,
  READ_ONLY,
  requireMember,
  requireTeam,
  withCatalog,
} from "../catalog-session.js";
import { type CommandSpec, parseIdFlag, requiredString, withFlagNames } from "../command.js";
import { LIFETIME_CHOICES, parseTokenLifetime } from "../token-lifetime.js";

const TEAM_OPTION = {
  team: { type: "string", placeholder: "<slug>", description: "The team's slug.", required: true },
} as const;
const JSON_OPTION = {
  json: { type: "boolean", description: "Print JSON for scripts instead of text." },
} as const;

const TOKEN_FLAGS = { name: "name", abilities: "abilities", lifetime: "lifetime" };

function isoDate(epochMs: number | null): string | null {
  return epochMs === null ? null : new Date(epochMs).toISOString();
}

function parseAbilities(text: string): string[] {
  const abilities = text
    .split(",")
    .map((ability) => ability.trim())
    .filter((ability) => ability !== "");
  if (abilities.includes("all") && abilities.length > 1) {
    throw new InvalidArgumentError(
      `--abilities all stands alone: it already grants ${ABILITIES.join(", ")}.`,
    );
  }
  const unknown = abilities.find(
    (ability) => ability !== "all" && !(ABILITIES as readonly string[]).includes(ability),
  );
  if (unknown !== undefined) {
    throw new InvalidArgumentError(
      `--abilities: Unknown ability "${unknown}"; the abilities are ${ABILITIES.join(", ")}, or all of them as "all".`,
    );
  }
  // "all" saves typing the five names for a personal admin token.
  return abilities.includes("all") ? [...ABILITIES] : abilities;
}

/**
 * `sluice token create`: mints a Control API token and prints the plaintext once.
 *
 * @example
 * ```ts
 * await runCli(["token", "create", "--team", "acme", "--user", "ada@example.com", "--name", "ci", "--abilities", "pools:read", "--lifetime", "6mo", "--json"], io);
 * ```
 */
export const tokenCreateCommand: CommandSpec = {
  name: "token create",
  summary: "Create a Control API token. The token is printed once; only its hash is stored.",
  options: {
    ...TEAM_OPTION,
    user: {
      type: "string",
      placeholder: "<email>",
      description: "Owner or admin creating it; the token acts as this user.",
      required: true,
    },
    name: {
      type: "string",
      placeholder: "<name>",
      description: "What the token is for.",
      required: true,
    },
    abilities: {
      type: "string",
      placeholder: "<a,b,...>",
      description: `Comma-separated: ${ABILITIES.join(", ")}; or "all".`,
      required: true,
    },
    lifetime: {
      type: "string",
      placeholder: LIFETIME_CHOICES,
      description: "Expiry: 1mo (also 1m) one month, 6mo (also 6m) six months, 1y one year.",
      required: true,
    },
    ...JSON_OPTION,
    ...DATA_DIR_OPTION,
  },
  details: ["Send it as the header Authorization: Bearer <token> to the Control API (/api/v1)."],
  examples: [
    "sluice token create --team acme --user ada@example.com --name ci --abilities pools:read,metrics:read --lifetime 6mo",
    "TOKEN=$(sluice token create --team acme --user ada@example.com --name ci --abilities all --lifetime 1mo --json | jq -r .token)",
  ],
  run: (args, io) =>
    withCatalog(
      args,
      io,
      async (catalog) => {
        const team = await requireTeam(catalog, requiredString(args, "team"));
        const user = await requireMember(catalog, team, requiredString(args, "user"));
        const lifetime = parseTokenLifetime(requiredString(args, "lifetime"));
        const { token, plaintext } = await withFlagNames(TOKEN_FLAGS, () =>
          catalog.createApiToken({
            teamId: team.id,
            actorUserId: user.id,
            name: requiredString(args, "name"),
            abilities: parseAbilities(requiredString(args, "abilities")),
            lifetime,
          }),
        );
        if (args.values.json === true) {
          io.out(JSON.stringify({ ...tokenJson(token, team.slug, user.email), token: plaintext }));
          return 0;
        }
        io.out(
          `Created API token "${token.name}" (id ${token.id}) for ${user.email} in team ${team.slug}; ` +
            `abilities ${token.abilities.join(", ")}; expires ${isoDate(token.expiresAt)}.`,
        );
        io.out("Copy it now, it is not shown again:");
        io.out("");
        io.out(`  ${plaintext}`);
        io.out("");
        return 0;
      },
      NO_SECRETS,
    ),
};

/**
 * `sluice token revoke`: revokes a token by id (see `sluice token list`).
 *
 * @example
 * ```ts
 * await runCli(["token", "revoke", "--team", "acme", "--user", "ada@example.com", "--id", "3"], io);
 * ```
 */
export const tokenRevokeCommand: CommandSpec = {
  name: "token revoke",
  summary: "Revoke a Control API token; it stops working at once.",
  options: {
    ...TEAM_OPTION,
    user: {
      type: "string",
      placeholder: "<email>",
      description: "Owner or admin revoking it.",
      required: true,
    },
    id: {
      type: "string",
      placeholder: "<token-id>",
      description: "Id from sluice token list.",
      required: true,
    },
    ...DATA_DIR_OPTION,
  },
  examples: ["sluice token revoke --team acme --user ada@example.com --id 3"],
  run: (args, io) =>
    withCatalog(
      args,
      io,
      async (catalog) => {
        const team = await requireTeam(catalog, requiredString(args, "team"));
        const user = await requireMember(catalog, team, requiredString(args, "user"));
        const tokenId = parseIdFlag(requiredString(args, "id"), "token");
        const before = (await catalog.store.listApiTokens(team.id)).find(
          (token) => token.id === tokenId,
        );
        const token = await catalog.revokeApiToken({
          teamId: team.id,
          actorUserId: user.id,
          tokenId,
        });
        if (!token) {
          io.err(`Error: team ${team.slug} has no API token with id ${tokenId}.`);
          return 1;
        }
        const which = `API token "${token.name}" (id ${token.id}) of team ${team.slug}`;
        if (before?.revokedAt != null) {
          io.out(`${which} was already revoked on ${new Date(before.revokedAt).toISOString()}.`);
        } else {
          io.out(`Revoked ${which}.`);
        }
        return 0;
      },
      NO_SECRETS,
    ),
};

/**
 * `sluice token list`: the team's tokens (never their values).
 *
 * @example
 * ```ts
 * await runCli(["token", "list", "--team", "acme"], io);
 * ```
 */
export const tokenListCommand: CommandSpec = {
  name: "token list",
  summary: "List a team's Control API tokens (never their values).",
  options: { ...TEAM_OPTION, ...JSON_OPTION, ...DATA_DIR_OPTION },
  examples: ["sluice token list --team acme", "sluice token list --team acme --json"],
  run: (args, io) =>
    withCatalog(
      args,
      io,
      async (catalog) => {
        const team = await requireTeam(catalog, requiredString(args, "team"));
        const tokens = await catalog.store.listApiTokens(team.id);
        const emails = new Map<number, string>();
        for (const { userId } of tokens) {
          if (emails.has(userId)) continue;
          emails.set(userId, (await catalog.store.getUser(userId))?.email ?? `user ${userId}`);
        }
        const emailOf = (userId: number) => emails.get(userId) ?? `user ${userId}`;
        if (args.values.json === true) {
          io.out(
            JSON.stringify(
              tokens.map((token) => tokenJson(token, team.slug, emailOf(token.userId))),
            ),
          );
          return 0;
        }
        if (tokens.length === 0) {
          io.out(`Team ${team.slug} has no API tokens.`);
          return 0;
        }
        io.out(`API tokens of team ${team.slug}:`);
        const now = catalog.clock.now();
        for (const token of tokens) {
          io.out(
            `  ${token.id}  "${token.name}"  ${emailOf(token.userId)}  ${token.abilities.join(",")}  ${tokenState(token, now)}`,
          );
        }
        return 0;
      },
      READ_ONLY,
    ),
};

function tokenState(token: ApiTokenRecord, now: number): string {
  if (token.revokedAt !== null) return `revoked ${isoDate(token.revokedAt)}`;
  if (now >= token.expiresAt) return `expired ${isoDate(token.expiresAt)}`;
  const used = token.lastUsedAt === null ? "never used" : `last used ${isoDate(token.lastUsedAt)}`;
  return `expires ${isoDate(token.expiresAt)}, ${used}`;
}

function tokenJson(token: ApiTokenRecord, teamSlug: string, userEmail: string) {
  return {
    id: token.id,
    name: token.name,
    team: teamSlug,
    user: userEmail,
    abilities: token.abilities,
    created_at: isoDate(token.createdAt),
    expires_at: isoDate(token.expiresAt),
    revoked_at: isoDate(token.revokedAt),
    last_used_at: isoDate(token.lastUsedAt),
  };
}
