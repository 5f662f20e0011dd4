import type { CatalogService } from "../../src/catalog/catalog-service.js";
import { credentialValueIssue } from "../../src/catalog/credential-rules.js";
import {
  connectionStringIssue,
  databaseOrigin,
  type PoolDatabaseLimits,
} from "../../src/catalog/pool-database.js";
import type {
  BudgetRecord,
  CredentialRecord,
  PoolDatabaseRecord,
  PoolInput,
  PoolRecord,
} from "../../src/catalog/types.js";
import { ConflictError, InvalidArgumentError } from "../../src/errors.js";
import { checkBudgetCeilings } from "./apply-budget-check.js";
import {
  type ApplyCredential,
  type ApplyDatabase,
  type ApplyFile,
  type ApplyPool,
  allPools,
} from "./apply-schema.js";
import { diffCallerPolicies } from "./policy-diff.js";

/** What `sluice apply` does (or would do) to one budget or pool. */
export interface PlannedChange {
  kind: "budget" | "pool";
  /** Budget name or pool subdomain. */
  name: string;
  action: "create" | "update" | "unchanged" | "delete";
  /** Readable field changes of an update, e.g. `maxConcurrent 8 → 4`. Secrets are never shown. */
  fields: string[];
}

/** A computed plan; `execute()` writes it to the catalog. */
export interface ApplyPlan {
  teamId: number;
  changes: PlannedChange[];
  execute(): Promise<void>;
}

type DesiredPool = Omit<PoolInput, "budgetId" | "credential" | "database"> & {
  budgetName: string | null;
  credential: { header: string; value: string } | null;
  database: (PoolDatabaseLimits & { connectionString: string }) | null;
};

/** Fields compared one by one; budget, credential and database are compared separately. */
const COMPARED_FIELDS = [
  "name",
  "description",
  "backend",
  "origin",
  "maxConcurrent",
  "queueSize",
  "queueTimeoutMs",
  "rpm",
  "requestTimeoutMs",
  "termMs",
  "renewIntervalMs",
  "adaptive",
  "requireKey",
  "allowAuthorizationHeader",
  "originSigning",
  "readMethods",
  "readPaths",
  "reservedConcurrent",
  "metricsRetentionDays",
] as const satisfies readonly (keyof DesiredPool & keyof PoolRecord)[];

/**
 * Compares an apply file with the team's catalog and returns the changes, without writing.
 * Budgets match by name and pools by subdomain; with `prune`, the team's pools and budgets
 * missing from the file are deleted. Credential values named by `valueFromEnv` are read from `env`; a
 * missing variable, an unknown team, a subdomain owned by another team, or a budget whose
 * pools would reserve more than its ceiling fails the whole plan before anything is written.
 *
 * @example
 * ```ts
 * const plan = await planApply(catalog, file, { env: process.env, prune: false });
 * plan.changes.forEach((change) => console.log(change.action, change.name));
 * await plan.execute();
 * ```
 */
export async function planApply(
  catalog: CatalogService,
  file: ApplyFile,
  options: { env: Readonly<Record<string, string | undefined>>; prune: boolean },
): Promise<ApplyPlan> {
  const store = catalog.store;
  const team = await store.findTeamBySlug(file.team);
  if (!team) {
    throw new InvalidArgumentError(
      `No team with slug "${file.team}". Create it with "sluice team create".`,
    );
  }
  const budgets = await store.listBudgets(team.id);
  const pools = await store.listPools(team.id);
  const desired = allPools(file).map(({ pool, budgetName }) =>
    desiredPool(pool, budgetName, options.env),
  );
  for (const pool of desired) {
    const owner = await store.findPoolBySubdomain(pool.subdomain);
    if (owner && owner.teamId !== team.id) {
      throw new ConflictError(`The subdomain "${pool.subdomain}" belongs to another team.`);
    }
  }
  checkBudgetCeilings(file.budgets, desired, pools, budgets, options.prune);
  const budgetChanges = planBudgets(file, budgets);
  const poolChanges = planPools(catalog, desired, pools, budgets);
  const deletions = options.prune ? planDeletions(file, desired, pools, budgets) : [];
  const changes = [...budgetChanges, ...poolChanges, ...deletions];
  return {
    teamId: team.id,
    changes,
    async execute() {
      const budgetByName = new Map(budgets.map((budget) => [budget.name, budget]));
      for (const [index, budget] of file.budgets.entries()) {
        if (budgetChanges[index]?.action === "unchanged") continue;
        const { name, originMaxConcurrent } = budget;
        budgetByName.set(name, await store.upsertBudget(team.id, { name, originMaxConcurrent }));
      }
      for (const [index, pool] of desired.entries()) {
        if (poolChanges[index]?.action === "unchanged") continue;
        const existing = pools.find((record) => record.subdomain === pool.subdomain);
        await store.upsertPool(team.id, toPoolInput(catalog, pool, budgetByName, existing));
      }
      // Pools first: a budget is deleted only once none of its pools is left.
      for (const deletion of deletions) {
        const pool = deletion.kind === "pool" && pools.find((p) => p.subdomain === deletion.name);
        if (pool) await store.deletePool(team.id, pool.id);
      }
      for (const deletion of deletions) {
        const budget = deletion.kind === "budget" && budgets.find((b) => b.name === deletion.name);
        if (budget) await store.deleteBudget(team.id, budget.id);
      }
    },
  };
}

function planBudgets(file: ApplyFile, existing: readonly BudgetRecord[]): PlannedChange[] {
  return file.budgets.map((budget) => {
    const current = existing.find((record) => record.name === budget.name);
    if (!current) return change("budget", budget.name, "create", []);
    const fields = diffField(
      "originMaxConcurrent",
      current.originMaxConcurrent,
      budget.originMaxConcurrent,
    );
    return change("budget", budget.name, fields.length > 0 ? "update" : "unchanged", fields);
  });
}

function planPools(
  catalog: CatalogService,
  desired: readonly DesiredPool[],
  existing: readonly PoolRecord[],
  budgets: readonly BudgetRecord[],
): PlannedChange[] {
  const budgetNameById = new Map(budgets.map((budget) => [budget.id, budget.name]));
  return desired.map((pool) => {
    const current = existing.find((record) => record.subdomain === pool.subdomain);
    if (!current) return change("pool", pool.subdomain, "create", []);
    const fields = diffPool(catalog, current, pool, budgetNameById);
    return change("pool", pool.subdomain, fields.length > 0 ? "update" : "unchanged", fields);
  });
}

/** With `--prune`: the team's pools, then budgets, that the file does not list. */
function planDeletions(
  file: ApplyFile,
  desired: readonly DesiredPool[],
  pools: readonly PoolRecord[],
  budgets: readonly BudgetRecord[],
): PlannedChange[] {
  const wantedPools = new Set(desired.map((pool) => pool.subdomain));
  const wantedBudgets = new Set(file.budgets.map((budget) => budget.name));
  return [
    ...pools
      .filter((pool) => !wantedPools.has(pool.subdomain))
      .map((pool) => change("pool", pool.subdomain, "delete", [])),
    ...budgets
      .filter((budget) => !wantedBudgets.has(budget.name))
      .map((budget) => change("budget", budget.name, "delete", [])),
  ];
}

function change(
  kind: PlannedChange["kind"],
  name: string,
  action: PlannedChange["action"],
  fields: string[],
): PlannedChange {
  return { kind, name, action, fields };
}

function desiredPool(
  pool: ApplyPool,
  budgetName: string | null,
  env: Readonly<Record<string, string | undefined>>,
): DesiredPool {
  const database = pool.database ? resolveDatabase(pool.subdomain, pool.database, env) : null;
  return {
    name: pool.name,
    description: pool.description,
    subdomain: pool.subdomain,
    backend: pool.backend,
    // A database pool shows where it connects, never who as or with what password.
    origin: database ? databaseOrigin(database.connectionString) : (pool.origin ?? ""),
    maxConcurrent: pool.maxConcurrent,
    queueSize: pool.queue.size,
    queueTimeoutMs: pool.queue.timeoutMs,
    rpm: pool.rpm,
    requestTimeoutMs: pool.requestTimeoutMs,
    termMs: pool.termMs,
    renewIntervalMs: pool.renewIntervalMs,
    adaptive: pool.adaptive,
    requireKey: pool.requireKey,
    allowAuthorizationHeader: pool.allowAuthorizationHeader,
    originSigning: pool.originSigning,
    readMethods: pool.readMethods,
    readPaths: pool.readPaths,
    callerPolicies: pool.callerPolicies,
    reservedConcurrent: budgetName === null ? 0 : (pool.reservedConcurrent ?? 0),
    metricsRetentionDays: pool.metricsRetentionDays,
    budgetName,
    credential: pool.credential ? resolveCredential(pool.subdomain, pool.credential, env) : null,
    database,
  };
}

function resolveDatabase(
  subdomain: string,
  database: ApplyDatabase,
  env: Readonly<Record<string, string | undefined>>,
): NonNullable<DesiredPool["database"]> {
  const limits = {
    maxRows: database.maxRows,
    maxResultBytes: database.maxResultBytes,
    statementTimeoutMs: database.statementTimeoutMs,
  };
  if ("value" in database) return { ...limits, connectionString: database.value };
  const value = env[database.valueFromEnv];
  const where = `Pool "${subdomain}": the environment variable ${database.valueFromEnv} (its read role's connection string)`;
  if (value === undefined || value === "") throw new InvalidArgumentError(`${where} is not set.`);
  const issue = connectionStringIssue(value);
  if (issue !== null) throw new InvalidArgumentError(`${where} is not usable. ${issue}`);
  return { ...limits, connectionString: value };
}

function resolveCredential(
  subdomain: string,
  credential: ApplyCredential,
  env: Readonly<Record<string, string | undefined>>,
): { header: string; value: string } {
  if ("value" in credential)
    return { header: credential.header.toLowerCase(), value: credential.value };
  const value = env[credential.valueFromEnv];
  if (value === undefined || value === "") {
    throw new InvalidArgumentError(
      `Pool "${subdomain}": the environment variable ${credential.valueFromEnv} (its credential value) is not set.`,
    );
  }
  const issue = credentialValueIssue(value);
  if (issue !== null) {
    throw new InvalidArgumentError(
      `Pool "${subdomain}": the environment variable ${credential.valueFromEnv} (its credential value) cannot be sent as a header value. ${issue}`,
    );
  }
  return { header: credential.header.toLowerCase(), value };
}

function diffField(field: string, before: unknown, after: unknown): string[] {
  const a = JSON.stringify(before);
  const b = JSON.stringify(after);
  return a === b ? [] : [`${field} ${a ?? "none"} → ${b ?? "none"}`];
}

function diffPool(
  catalog: CatalogService,
  existing: PoolRecord,
  desired: DesiredPool,
  budgetNameById: ReadonlyMap<number, string>,
): string[] {
  const fields = COMPARED_FIELDS.flatMap((field) =>
    diffField(field, existing[field], desired[field]),
  );
  fields.push(...diffCallerPolicies(existing.callerPolicies, desired.callerPolicies));
  const currentBudget =
    existing.budgetId === null ? null : (budgetNameById.get(existing.budgetId) ?? null);
  fields.push(...diffField("budget", currentBudget, desired.budgetName));
  if (!sameCredential(catalog, existing, desired.credential)) {
    // Say which side changed, never the values.
    fields.push(
      desired.credential === null
        ? "credential removed"
        : existing.credential === null
          ? `credential added (${desired.credential.header})`
          : `credential changed (${desired.credential.header})`,
    );
  }
  fields.push(...diffDatabase(catalog, existing, desired.database));
  return fields;
}

/** The database's changes: limits by value, the connection string only as "changed". */
function diffDatabase(
  catalog: CatalogService,
  existing: PoolRecord,
  desired: DesiredPool["database"],
): string[] {
  if (existing.database === null || desired === null) {
    if (existing.database === desired) return [];
    return [desired === null ? "database removed" : "database added"];
  }
  const { connectionString: _stored, ...before } = existing.database;
  const { connectionString: _wanted, ...after } = desired;
  const fields = (Object.keys(after) as (keyof PoolDatabaseLimits)[]).flatMap((field) =>
    diffField(`database.${field}`, before[field], after[field]),
  );
  if (!sameConnection(catalog, existing, desired.connectionString)) {
    fields.push("database connection string changed");
  }
  return fields;
}

function sameConnection(
  catalog: CatalogService,
  existing: PoolRecord,
  connectionString: string,
): boolean {
  try {
    return catalog.decryptDatabaseUrl(existing) === connectionString;
  } catch {
    // Unreadable (for instance sealed under another key): re-seal it under the current one.
    return false;
  }
}

function sameCredential(
  catalog: CatalogService,
  existing: PoolRecord,
  desired: DesiredPool["credential"],
): boolean {
  if (existing.credential === null || desired === null) return existing.credential === desired;
  if (existing.credential.header !== desired.header) return false;
  try {
    return catalog.decryptCredential(existing)?.value === desired.value;
  } catch {
    // Unreadable (for instance sealed under another key): re-seal it under the current one.
    return false;
  }
}

function toPoolInput(
  catalog: CatalogService,
  pool: DesiredPool,
  budgets: ReadonlyMap<string, BudgetRecord>,
  existing: PoolRecord | undefined,
): PoolInput {
  const { budgetName, credential, database, ...fields } = pool;
  const budgetId = budgetName === null ? null : (budgets.get(budgetName)?.id ?? null);
  return {
    ...fields,
    budgetId,
    credential: sealedCredential(catalog, existing, credential),
    database: sealedDatabase(catalog, existing, database),
  };
}

/** Keeps the stored ciphertext when the connection string is unchanged (re-applying writes nothing new). */
function sealedDatabase(
  catalog: CatalogService,
  existing: PoolRecord | undefined,
  database: DesiredPool["database"],
): PoolDatabaseRecord | null {
  if (database === null) return null;
  const { connectionString, ...limits } = database;
  if (existing?.database && sameConnection(catalog, existing, connectionString)) {
    return { ...limits, connectionString: existing.database.connectionString };
  }
  return catalog.sealDatabase(connectionString, limits);
}

/** Keeps the stored ciphertext when the value is unchanged, so re-applying writes nothing new. */
function sealedCredential(
  catalog: CatalogService,
  existing: PoolRecord | undefined,
  credential: DesiredPool["credential"],
): CredentialRecord | null {
  if (credential === null) return null;
  if (existing && sameCredential(catalog, existing, credential)) return existing.credential;
  return catalog.sealCredential(credential.header, credential.value);
}
