import * as v from "valibot";
import type { CatalogService } from "../../src/catalog/catalog-service.js";
import {
  databaseOrigin,
  POOL_DATABASE_DEFAULTS,
  type PoolDatabaseLimits,
} from "../../src/catalog/pool-database.js";
import type {
  BudgetRecord,
  CredentialRecord,
  PoolDatabaseRecord,
  PoolInput,
  PoolRecord,
} from "../../src/catalog/types.js";
import { groupIssuesByField } from "../../src/catalog/validation.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { POOL_DEFAULTS } from "../../src/governor/settings.js";
import { checkBudgetCeilings } from "../cli/apply-budget-check.js";
import { APPLY_POOL_DEFAULTS, BudgetPoolSchema } from "../cli/apply-schema.js";
import {
  addFieldError,
  type FieldErrorMap,
  type FormBody,
  formText,
  numberField,
} from "./forms.js";
import { policyCandidate, policyField, policyFormValues, readPolicyForm } from "./policy-form.js";

/** The pool form's values as text (checkboxes "on" or ""), the way the page shows them. */
export type PoolFormValues = Record<string, string>;

/** The pool form's text fields, named as the apply file's paths where they can be. */
const POOL_TEXT_FIELDS = [
  "name",
  "description",
  "subdomain",
  "backend",
  "origin",
  "maxConcurrent",
  "queue.size",
  "queue.timeoutMs",
  "rpm",
  "requestTimeoutMs",
  "termMs",
  "renewIntervalMs",
  "readMethods",
  "readPaths",
  "metricsRetentionDays",
  "budgetId",
  "reservedConcurrent",
  "credentialHeader",
  "credentialAction",
  "database.maxRows",
  "database.maxResultBytes",
  "database.statementTimeoutMs",
  "version",
] as const;
/** The pool form's checkboxes (absent from a post when unchecked). */
const POOL_CHECKBOXES = [
  "adaptive",
  "requireKey",
  "allowAuthorizationHeader",
  "originSigning",
] as const;

/** The secrets a pool form may carry: kept apart from its values, never shown back. */
export interface PoolFormSecrets {
  /** The managed credential's new value ("" for none). */
  credential: string;
  /** A postgres pool's new read-role connection string ("" for none). */
  database: string;
}

/** The values of a posted pool form, and its secrets apart. */
export function readPoolForm(form: FormBody): { values: PoolFormValues; secrets: PoolFormSecrets } {
  const values: PoolFormValues = {};
  for (const name of POOL_TEXT_FIELDS) values[name] = formText(form, name);
  for (const name of POOL_CHECKBOXES) values[name] = formText(form, name) === "" ? "" : "on";
  Object.assign(values, readPolicyForm(form));
  const secrets = {
    credential: formText(form, "credentialValue"),
    database: formText(form, "databaseConnection"),
  };
  return { values, secrets };
}

const on = (flag: boolean) => (flag ? "on" : "");

function readPathsText(readPaths: Record<string, string[]> | null): string {
  if (!readPaths) return "";
  return Object.entries(readPaths)
    .flatMap(([method, prefixes]) => prefixes.map((prefix) => `${method} ${prefix}`))
    .join("\n");
}

/** The form of a stored pool, or of a new one with the apply file's defaults. */
export function poolFormValues(pool: PoolRecord | null): PoolFormValues {
  if (!pool) {
    return {
      name: "",
      description: "",
      subdomain: "",
      backend: APPLY_POOL_DEFAULTS.backend,
      origin: "",
      maxConcurrent: "",
      "queue.size": String(POOL_DEFAULTS.queue.size),
      "queue.timeoutMs": String(POOL_DEFAULTS.queue.timeoutMs),
      rpm: "",
      requestTimeoutMs: String(POOL_DEFAULTS.requestTimeoutMs),
      termMs: String(POOL_DEFAULTS.termMs),
      renewIntervalMs: String(POOL_DEFAULTS.renewIntervalMs),
      readMethods: "",
      readPaths: "",
      metricsRetentionDays: String(APPLY_POOL_DEFAULTS.metricsRetentionDays),
      budgetId: "",
      reservedConcurrent: "0",
      credentialHeader: "authorization",
      credentialAction: "keep",
      "database.maxRows": String(POOL_DATABASE_DEFAULTS.maxRows),
      "database.maxResultBytes": String(POOL_DATABASE_DEFAULTS.maxResultBytes),
      "database.statementTimeoutMs": String(POOL_DATABASE_DEFAULTS.statementTimeoutMs),
      version: "",
      adaptive: on(POOL_DEFAULTS.adaptive),
      requireKey: on(APPLY_POOL_DEFAULTS.requireKey),
      allowAuthorizationHeader: on(APPLY_POOL_DEFAULTS.allowAuthorizationHeader),
      originSigning: on(APPLY_POOL_DEFAULTS.originSigning),
      ...policyFormValues(null),
    };
  }
  return {
    name: pool.name,
    description: pool.description ?? "",
    subdomain: pool.subdomain,
    backend: pool.backend,
    // A postgres pool's origin is derived from its connection; the form leaves it out.
    origin: pool.backend === "postgres" ? "" : pool.origin,
    maxConcurrent: String(pool.maxConcurrent),
    "queue.size": String(pool.queueSize),
    "queue.timeoutMs": String(pool.queueTimeoutMs),
    rpm: pool.rpm === null ? "" : String(pool.rpm),
    requestTimeoutMs: String(pool.requestTimeoutMs),
    termMs: String(pool.termMs),
    renewIntervalMs: String(pool.renewIntervalMs),
    readMethods: pool.readMethods.join(", "),
    readPaths: readPathsText(pool.readPaths),
    metricsRetentionDays: String(pool.metricsRetentionDays),
    budgetId: pool.budgetId === null ? "" : String(pool.budgetId),
    reservedConcurrent: String(pool.reservedConcurrent),
    credentialHeader: pool.credential?.header ?? "authorization",
    credentialAction: "keep",
    "database.maxRows": String(pool.database?.maxRows ?? POOL_DATABASE_DEFAULTS.maxRows),
    "database.maxResultBytes": String(
      pool.database?.maxResultBytes ?? POOL_DATABASE_DEFAULTS.maxResultBytes,
    ),
    "database.statementTimeoutMs": String(
      pool.database?.statementTimeoutMs ?? POOL_DATABASE_DEFAULTS.statementTimeoutMs,
    ),
    version: String(pool.updatedAt),
    adaptive: on(pool.adaptive),
    requireKey: on(pool.requireKey),
    allowAuthorizationHeader: on(pool.allowAuthorizationHeader),
    originSigning: on(pool.originSigning),
    ...policyFormValues(pool.callerPolicies),
  };
}

function parseReadPaths(text: string, errors: FieldErrorMap): Record<string, string[]> | null {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  if (lines.length === 0) return null;
  const paths: Record<string, string[]> = {};
  for (const line of lines) {
    const match = /^(\S+)\s+(\S+)$/.exec(line);
    if (!match) {
      addFieldError(errors, "readPaths", `"${line}": write one METHOD /prefix per line.`);
      continue;
    }
    const method = match[1]!.toUpperCase();
    const prefixes = paths[method] ?? [];
    prefixes.push(match[2]!);
    paths[method] = prefixes;
  }
  return paths;
}

/** The field an apply-schema issue belongs to on this form. */
function fieldOf(issue: v.BaseIssue<unknown>): { field: string; message: string } {
  const path = v.getDotPath(issue);
  if (path === null) {
    // Rules across fields say which field they are about: "readPaths: …", "origin: …".
    const named = /^(readPaths|origin|database): (.*)$/s.exec(issue.message);
    if (named) {
      const field = named[1] === "database" ? "databaseConnection" : named[1]!;
      return { field, message: named[2]! };
    }
    const field = issue.message.startsWith("reservedConcurrent") ? "reservedConcurrent" : "";
    return { field, message: issue.message };
  }
  const [first, second] = path.split(".");
  const message =
    issue.message === 'Invalid type: Expected number but received ""' ? "Required." : issue.message;
  if (first === "callerPolicies") return { field: policyField(path), message };
  if ((first === "queue" || first === "database") && second) {
    const field =
      second === "value" || second === "valueFromEnv" ? "databaseConnection" : `${first}.${second}`;
    return { field, message };
  }
  return { field: first ?? "", message };
}

/** Stands for a stored connection string the form keeps: it passes the schema, and is never used. */
const KEPT_CONNECTION = { valueFromEnv: "SLUICE_STORED_CONNECTION" };

/** What the pool form asks to store, before the credential and the connection are sealed. */
export interface PoolPlan {
  input: Omit<PoolInput, "credential" | "database">;
  credential:
    | { action: "keep" }
    | { action: "clear" }
    | { action: "set"; header: string; value: string };
  /** A postgres pool's connection (kept as stored, or a new one) and limits; null for http. */
  database: { limits: PoolDatabaseLimits; connectionString: string | null } | null;
}

/**
 * Checks the posted pool form with the apply file's pool schema (the same defaults, bounds
 * and messages as `sluice apply`), the team's budget and its ceiling rule. Field errors are
 * named after the form's fields.
 */
export function checkPoolForm(
  values: PoolFormValues,
  secrets: PoolFormSecrets,
  context: {
    existing: PoolRecord | null;
    pools: readonly PoolRecord[];
    budgets: readonly BudgetRecord[];
  },
): { plan: PoolPlan } | { errors: FieldErrorMap } {
  const errors: FieldErrorMap = {};
  const postgres = values.backend === "postgres";
  const budgetId = values.budgetId === "" ? null : Number(values.budgetId);
  const budget = budgetId === null ? null : context.budgets.find((b) => b.id === budgetId);
  if (budget === undefined) addFieldError(errors, "budgetId", "Not one of the team's budgets.");
  const candidate = {
    name: values.name,
    description: values.description?.trim() === "" ? null : values.description,
    subdomain: context.existing ? context.existing.subdomain : values.subdomain?.trim(),
    backend: values.backend,
    origin: postgres || values.origin?.trim() === "" ? undefined : values.origin?.trim(),
    // Required: blank stays "" for the schema to name it.
    maxConcurrent: numberField(values, "maxConcurrent", errors) ?? "",
    queue: {
      size: numberField(values, "queue.size", errors),
      timeoutMs: numberField(values, "queue.timeoutMs", errors),
    },
    rpm: numberField(values, "rpm", errors, null),
    requestTimeoutMs: numberField(values, "requestTimeoutMs", errors),
    termMs: numberField(values, "termMs", errors),
    renewIntervalMs: numberField(values, "renewIntervalMs", errors),
    adaptive: values.adaptive === "on",
    requireKey: values.requireKey === "on",
    allowAuthorizationHeader: values.allowAuthorizationHeader === "on",
    originSigning: values.originSigning === "on",
    readMethods: (values.readMethods ?? "").split(/[\s,]+/).filter((method) => method !== ""),
    readPaths: parseReadPaths(values.readPaths ?? "", errors),
    metricsRetentionDays: numberField(values, "metricsRetentionDays", errors),
    reservedConcurrent:
      budgetId === null ? 0 : (numberField(values, "reservedConcurrent", errors) ?? 0),
    database: postgres ? databaseCandidate(values, secrets, context.existing, errors) : null,
    callerPolicies: policyCandidate(values, errors, context.existing?.callerPolicies ?? null),
  };
  const parsed = v.safeParse(BudgetPoolSchema, candidate);
  const alreadyWrong = new Set(Object.keys(errors));
  if (!parsed.success) {
    for (const issue of parsed.issues) {
      const { field, message } = fieldOf(issue);
      if (!alreadyWrong.has(field)) addFieldError(errors, field, message);
    }
  }
  const credential = credentialPlan(values, secrets.credential, context.existing, errors);
  if (!parsed.success || Object.keys(errors).length > 0 || !credential) return { errors };
  const pool = parsed.output;
  const taken = context.pools.find(
    (p) => p.subdomain === pool.subdomain && p.id !== context.existing?.id,
  );
  if (taken) return { errors: { subdomain: ["The team has a pool with this subdomain already."] } };
  const ceilingError = ceilingIssue(
    pool.subdomain,
    budget ?? null,
    pool.reservedConcurrent,
    context,
  );
  if (ceilingError) return { errors: { reservedConcurrent: [ceilingError] } };
  const { queue, credential: _credential, database, origin, ...rest } = pool;
  const connectionString = secrets.database === "" ? null : secrets.database;
  return {
    plan: {
      input: {
        ...rest,
        // As `sluice apply` stores it: a postgres pool's origin says where it connects.
        origin: database
          ? connectionString === null
            ? (context.existing?.origin ?? "")
            : databaseOrigin(connectionString)
          : (origin ?? ""),
        queueSize: queue.size,
        queueTimeoutMs: queue.timeoutMs,
        budgetId: budget?.id ?? null,
        reservedConcurrent: budget ? pool.reservedConcurrent : 0,
      },
      credential,
      database: database
        ? {
            limits: {
              maxRows: database.maxRows,
              maxResultBytes: database.maxResultBytes,
              statementTimeoutMs: database.statementTimeoutMs,
            },
            connectionString,
          }
        : null,
    },
  };
}

/** The `database` of a postgres pool's form for the schema: a new connection, or the stored one kept. */
function databaseCandidate(
  values: PoolFormValues,
  secrets: PoolFormSecrets,
  existing: PoolRecord | null,
  errors: FieldErrorMap,
) {
  const limits = {
    maxRows: numberField(values, "database.maxRows", errors),
    maxResultBytes: numberField(values, "database.maxResultBytes", errors),
    statementTimeoutMs: numberField(values, "database.statementTimeoutMs", errors),
  };
  if (secrets.database !== "") return { value: secrets.database, ...limits };
  if (existing?.database) return { ...KEPT_CONNECTION, ...limits };
  addFieldError(
    errors,
    "databaseConnection",
    "Required for a postgres pool: the read role's postgres:// connection string.",
  );
  return null;
}

function credentialPlan(
  values: PoolFormValues,
  value: string,
  existing: PoolRecord | null,
  errors: FieldErrorMap,
): PoolPlan["credential"] | null {
  const action = existing ? values.credentialAction : value === "" ? "keep" : "replace";
  if (action === "keep") return { action: "keep" };
  if (action === "clear") return { action: "clear" };
  if (action !== "replace") {
    addFieldError(errors, "credentialAction", "Choose keep, replace or clear.");
    return null;
  }
  if (value === "") {
    addFieldError(
      errors,
      "credentialValue",
      "Enter the new credential value (or keep the stored one).",
    );
    return null;
  }
  return { action: "set", header: (values.credentialHeader ?? "").trim(), value };
}

function ceilingIssue(
  subdomain: string,
  budget: BudgetRecord | null,
  reserved: number,
  context: { pools: readonly PoolRecord[]; budgets: readonly BudgetRecord[] },
): string | null {
  try {
    checkBudgetCeilings(
      [],
      [{ subdomain, budgetName: budget?.name ?? null, reservedConcurrent: reserved }],
      context.pools,
      context.budgets,
      false,
    );
    return null;
  } catch (error) {
    if (error instanceof InvalidArgumentError) return error.message;
    throw error;
  }
}

/**
 * The credential to store: the pool's own (keep), none (clear), or a new one sealed under
 * the server's key. A header or value that cannot be sent is an error on its field.
 */
export function sealPlannedSecrets(
  catalog: CatalogService,
  plan: PoolPlan,
  existing: PoolRecord | null,
):
  | { credential: CredentialRecord | null; database: PoolDatabaseRecord | null }
  | { errors: FieldErrorMap } {
  try {
    return {
      credential: sealedCredential(catalog, plan, existing),
      database: sealedDatabase(catalog, plan, existing),
    };
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    const grouped = groupIssuesByField(error.issues);
    const errors: FieldErrorMap = {};
    if (grouped["credential.header"]) errors.credentialHeader = grouped["credential.header"];
    if (grouped["credential.value"]) errors.credentialValue = grouped["credential.value"];
    if (grouped["database.connectionString"]) {
      errors.databaseConnection = grouped["database.connectionString"];
    }
    return { errors };
  }
}

function sealedCredential(
  catalog: CatalogService,
  plan: PoolPlan,
  existing: PoolRecord | null,
): CredentialRecord | null {
  const credential = plan.credential;
  if (credential.action === "keep") return existing?.credential ?? null;
  if (credential.action === "clear") return null;
  return catalog.sealCredential(credential.header, credential.value);
}

function sealedDatabase(
  catalog: CatalogService,
  plan: PoolPlan,
  existing: PoolRecord | null,
): PoolDatabaseRecord | null {
  if (!plan.database) return null;
  const { limits, connectionString } = plan.database;
  if (connectionString !== null) return catalog.sealDatabase(connectionString, limits);
  // Kept: the stored ciphertext with the limits as the form gives them.
  return { ...limits, connectionString: existing!.database!.connectionString };
}
