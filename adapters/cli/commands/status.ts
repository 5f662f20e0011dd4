import type { CatalogService } from "../../../src/catalog/catalog-service.js";
import { budgetUnallocated } from "../../../src/catalog/governor-mapping.js";
import type { BudgetRecord, PoolRecord, TeamRecord } from "../../../src/catalog/types.js";
import { countNoun } from "../../server/count-noun.js";
import { DATA_DIR_OPTION, READ_ONLY, requireTeam, withCatalog } from "../catalog-session.js";
import { type CliIo, type CommandSpec, optionalString } from "../command.js";
import { shownPolicies } from "../policy-diff.js";

function poolLine(pool: PoolRecord): string {
  const parts = [
    `max ${pool.maxConcurrent} concurrent`,
    pool.queueSize > 0
      ? `queue ${pool.queueSize} (wait up to ${pool.queueTimeoutMs} ms)`
      : "no queue",
    pool.rpm === null ? "no rpm limit" : `${pool.rpm} rpm`,
  ];
  if (pool.budgetId !== null) parts.push(`reserved ${pool.reservedConcurrent}`);
  parts.push(pool.requireKey ? "key required" : "open (no key)");
  if (pool.credential) parts.push(`credential in ${pool.credential.header}`);
  if (pool.database) parts.push(`read-only SQL, at most ${pool.database.maxRows} rows`);
  return `${pool.subdomain} "${pool.name}" → ${pool.origin}: ${parts.join(", ")}`;
}

function budgetLine(budget: BudgetRecord, pools: readonly PoolRecord[]): string {
  const ceiling =
    budget.originMaxConcurrent === null
      ? "no shared ceiling"
      : `origin max ${budget.originMaxConcurrent} concurrent, ${budgetUnallocated(budget, pools)} unallocated`;
  return `Budget ${budget.name} (id ${budget.id}): ${ceiling}`;
}

async function printTeam(io: CliIo, catalog: CatalogService, team: TeamRecord): Promise<void> {
  const pools = await catalog.store.listPools(team.id);
  const budgets = await catalog.store.listBudgets(team.id);
  io.out(
    `Team ${team.slug} "${team.name}" (id ${team.id}): ${countNoun(budgets.length, "budget")}, ${countNoun(pools.length, "pool")}`,
  );
  for (const budget of budgets) {
    io.out(`  ${budgetLine(budget, pools)}`);
    for (const pool of pools.filter((p) => p.budgetId === budget.id))
      io.out(`    ${poolLine(pool)}`);
  }
  if (budgets.length === 0 && pools.length === 0) {
    io.out('  Nothing yet: add budgets and pools with "sluice apply <file.json>".');
  }
  const loose = pools.filter((pool) => pool.budgetId === null);
  if (loose.length > 0) io.out("  Pools outside any budget:");
  for (const pool of loose) io.out(`    ${poolLine(pool)}`);
}

async function statusJson(catalog: CatalogService, team: TeamRecord) {
  const pools = await catalog.store.listPools(team.id);
  return {
    team: { id: team.id, name: team.name, slug: team.slug },
    budgets: (await catalog.store.listBudgets(team.id)).map((budget) => ({
      ...budget,
      unallocated: budgetUnallocated(budget, pools),
    })),
    // Ciphertexts stay out of the output: the credential's header and the database's
    // limits are enough to tell. A JWKS URL's query may hold a token: shown as `?…`.
    pools: pools.map(({ credential, database, callerPolicies, ...pool }) => ({
      ...pool,
      callerPolicies: shownPolicies(callerPolicies),
      credentialHeader: credential?.header ?? null,
      database: database && {
        maxRows: database.maxRows,
        maxResultBytes: database.maxResultBytes,
        statementTimeoutMs: database.statementTimeoutMs,
      },
    })),
  };
}

/**
 * `sluice status`: the catalog's budgets and pools with their limits.
 *
 * @example
 * ```ts
 * await runCli(["status", "--team", "acme"], io);
 * ```
 */
export const statusCommand: CommandSpec = {
  name: "status",
  summary: "Show budgets and pools with their limits, as stored in the catalog.",
  options: {
    team: {
      type: "string",
      placeholder: "<slug>",
      description: "Only this team. Default: every team.",
    },
    json: { type: "boolean", description: "Print JSON for scripts instead of text." },
    ...DATA_DIR_OPTION,
  },
  examples: ["sluice status", "sluice status --team acme --json"],
  run: (args, io) =>
    withCatalog(
      args,
      io,
      async (catalog) => {
        const slug = optionalString(args, "team");
        const teams = slug ? [await requireTeam(catalog, slug)] : await catalog.store.listTeams();
        if (args.values.json === true) {
          const status = [];
          for (const team of teams) status.push(await statusJson(catalog, team));
          io.out(JSON.stringify(status));
          return 0;
        }
        if (teams.length === 0) io.out('No teams yet. Create one with "sluice team create".');
        for (const team of teams) await printTeam(io, catalog, team);
        return 0;
      },
      READ_ONLY,
    ),
};
