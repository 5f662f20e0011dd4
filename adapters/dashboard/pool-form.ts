import * as v from "valibot";
import type { CatalogService } from "../../src/catalog/catalog-service.js";
import type {
  BudgetRecord,
  CredentialRecord,
  PoolInput,
  PoolRecord,
} from "../../src/catalog/types.js";
import { groupIssuesByField } from "../../src/catalog/validation.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { POOL_DEFAULTS } from "../../src/governor/settings.js";
import { checkBudgetCeilings } from "../cli/apply-budget-check.js";
import { APPLY_POOL_DEFAULTS, BudgetPoolSchema } from "../cli/apply-schema.js";
import { addFieldError, type FieldErrorMap, type FormBody, formText } from "./forms.js";

/** The pool form's values as text (checkboxes "on" or ""), the way the page shows them. */
export type PoolFormValues = Record<string, string>;

export const POOL_TEXT_FIELDS = [
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
  "version",
] as const;
export const POOL_CHECKBOXES = [
  "adaptive",
  "requireKey",
  "allowAuthorizationHeader",
  "originSigning",
] as const;

/** The values of a posted pool form; the credential value is kept apart (never shown back). */
export function readPoolForm(form: FormBody): { values: PoolFormValues; credentialValue: string } {
  const values: PoolFormValues = {};
  for (const name of POOL_TEXT_FIELDS) values[name] = formText(form, name);
  for (const name of POOL_CHECKBOXES) values[name] = formText(form, name) === "" ? "" : "on";
  return { values, credentialValue: formText(form, "credentialValue") };
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
      version: "",
      adaptive: on(POOL_DEFAULTS.adaptive),
      requireKey: on(APPLY_POOL_DEFAULTS.requireKey),
      allowAuthorizationHeader: on(APPLY_POOL_DEFAULTS.allowAuthorizationHeader),
      originSigning: on(APPLY_POOL_DEFAULTS.originSigning),
    };
  }
  return {
    name: pool.name,
    description: pool.description ?? "",
    subdomain: pool.subdomain,
    backend: pool.backend,
    origin: pool.origin,
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
    version: String(pool.updatedAt),
    adaptive: on(pool.adaptive),
    requireKey: on(pool.requireKey),
    allowAuthorizationHeader: on(pool.allowAuthorizationHeader),
    originSigning: on(pool.originSigning),
  };
}

const WHOLE = /^\s*-?\d+\s*$/;

/** A number field: blank is "not given" (the schema's default applies), junk an error. */
function numberField(
  values: PoolFormValues,
  name: string,
  errors: FieldErrorMap,
  blank: undefined | null = undefined,
) {
  const text = values[name] ?? "";
  if (text.trim() === "") return blank;
  if (!WHOLE.test(text)) {
    addFieldError(errors, name, "Must be a whole number.");
    return undefined;
  }
  return Number(text);
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
function fieldOf(issue: v.BaseIssue<unknown>): string {
  const path = v.getDotPath(issue);
  if (path === null) {
    if (issue.message.startsWith("readPaths:")) return "readPaths";
    if (issue.message.startsWith("reservedConcurrent")) return "reservedConcurrent";
    return "";
  }
  const [first, second] = path.split(".");
  return first === "queue" && second ? `queue.${second}` : (first ?? "");
}

function trimReadPathsPrefix(message: string): string {
  return message.replace(/^readPaths: /, "");
}

/** What the pool form asks to store, before the credential is sealed. */
export interface PoolPlan {
  input: Omit<PoolInput, "credential">;
  credential:
    | { action: "keep" }
    | { action: "clear" }
    | { action: "set"; header: string; value: string };
}

/**
 * Checks the posted pool form with the apply file's pool schema (the same defaults, bounds
 * and messages as `sluice apply`), the team's budget and its ceiling rule. Field errors are
 * named after the form's fields.
 */
export function checkPoolForm(
  values: PoolFormValues,
  credentialValue: string,
  context: {
    existing: PoolRecord | null;
    pools: readonly PoolRecord[];
    budgets: readonly BudgetRecord[];
  },
): { plan: PoolPlan } | { errors: FieldErrorMap } {
  const errors: FieldErrorMap = {};
  const budgetId = values.budgetId === "" ? null : Number(values.budgetId);
  const budget = budgetId === null ? null : context.budgets.find((b) => b.id === budgetId);
  if (budget === undefined) addFieldError(errors, "budgetId", "Not one of the team's budgets.");
  const candidate = {
    name: values.name,
    description: values.description?.trim() === "" ? null : values.description,
    subdomain: context.existing ? context.existing.subdomain : values.subdomain?.trim(),
    backend: values.backend,
    origin: values.origin?.trim(),
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
  };
  const parsed = v.safeParse(BudgetPoolSchema, candidate);
  const alreadyWrong = new Set(Object.keys(errors));
  if (!parsed.success) {
    for (const issue of parsed.issues) {
      const field = fieldOf(issue);
      if (alreadyWrong.has(field)) continue;
      const message =
        issue.message === 'Invalid type: Expected number but received ""'
          ? "Required."
          : trimReadPathsPrefix(issue.message);
      addFieldError(errors, field, message);
    }
  }
  const credential = credentialPlan(values, credentialValue, context.existing, errors);
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
  const { queue, credential: _credential, ...rest } = pool;
  return {
    plan: {
      input: {
        ...rest,
        queueSize: queue.size,
        queueTimeoutMs: queue.timeoutMs,
        budgetId: budget?.id ?? null,
        reservedConcurrent: budget ? pool.reservedConcurrent : 0,
      },
      credential,
    },
  };
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
export function sealPlannedCredential(
  catalog: CatalogService,
  plan: PoolPlan["credential"],
  existing: PoolRecord | null,
): { credential: CredentialRecord | null } | { errors: FieldErrorMap } {
  if (plan.action === "keep") return { credential: existing?.credential ?? null };
  if (plan.action === "clear") return { credential: null };
  try {
    return { credential: catalog.sealCredential(plan.header, plan.value) };
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    const grouped = groupIssuesByField(error.issues);
    const errors: FieldErrorMap = {};
    if (grouped["credential.header"]) errors.credentialHeader = grouped["credential.header"];
    if (grouped["credential.value"]) errors.credentialValue = grouped["credential.value"];
    return { errors };
  }
}
