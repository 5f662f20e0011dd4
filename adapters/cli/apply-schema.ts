import * as v from "valibot";
import { credentialHeaderIssue, credentialValueIssue } from "../../src/catalog/credential-rules.js";
import { hasControlCharacter, PLAIN_TEXT_MESSAGE } from "../../src/catalog/plain-text.js";
import { connectionStringIssue, POOL_DATABASE_DEFAULTS } from "../../src/catalog/pool-database.js";
import { MAX_RPM, MAX_SETTING_MS, POOL_DEFAULTS } from "../../src/governor/settings.js";
import { CallerPoliciesSchema } from "../../src/policies/policy-schema.js";

/** Defaults of the catalog-only pool fields of an apply file (governor fields use `POOL_DEFAULTS`). */
export const APPLY_POOL_DEFAULTS = {
  description: null,
  backend: "http",
  requireKey: true,
  allowAuthorizationHeader: true,
  credential: null,
  database: null,
  originSigning: false,
  readMethods: [] as string[],
  readPaths: null,
  callerPolicies: null,
  reservedConcurrent: 0,
  metricsRetentionDays: 30,
} as const;

/**
 * Messages of the file's objects in a person's words: valibot's default for a missing or
 * unknown key ("Invalid key: Expected never but received …") reads like a stack trace.
 */
const objectMessage = (issue: v.BaseIssue<unknown>): string => {
  if (!issue.path) return "Must be a JSON object.";
  return issue.received === "undefined" ? "Required." : "Unknown field (check the spelling).";
};

// The governor's own bounds, checked here too so a bad file fails before anything is written.
const positiveInt = v.pipe(v.number(), v.safeInteger(), v.minValue(1));
const nonNegativeInt = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
const positiveMs = v.pipe(positiveInt, v.maxValue(MAX_SETTING_MS));
const nonNegativeMs = v.pipe(nonNegativeInt, v.maxValue(MAX_SETTING_MS));
const plainText = v.check((text: string) => !hasControlCharacter(text), PLAIN_TEXT_MESSAGE);
const text = (max: number) =>
  v.pipe(v.string(), v.trim(), v.minLength(1, "Required."), v.maxLength(max), plainText);
const httpMethod = v.pipe(
  v.string(),
  v.toUpperCase(),
  v.regex(/^[A-Z]+$/, "Must be an HTTP method name such as QUERY."),
  v.check(
    (method) => method !== "TRACE" && method !== "CONNECT",
    "TRACE and CONNECT are never proxied, so they cannot be read methods.",
  ),
);

const ENV_NAME = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "Must be an environment variable name."),
);

const CredentialHeaderSchema = v.pipe(
  v.string(),
  v.check(
    (header) => credentialHeaderIssue(header) === null,
    (issue) => credentialHeaderIssue(String(issue.input)) ?? "",
  ),
);

const CredentialSchema = v.pipe(
  v.union(
    [
      v.strictObject(
        {
          header: CredentialHeaderSchema,
          /** Name of an environment variable holding the value when `sluice apply` runs. */
          valueFromEnv: ENV_NAME,
        },
        objectMessage,
      ),
      v.strictObject(
        {
          header: CredentialHeaderSchema,
          /** The value itself. Prefer `valueFromEnv`: a secret in a file tends to end up in git. */
          value: v.pipe(
            v.string(),
            v.check(
              (value) => credentialValueIssue(value) === null,
              (issue) => credentialValueIssue(String(issue.input)) ?? "",
            ),
          ),
        },
        objectMessage,
      ),
    ],
    'Must be { "header", "valueFromEnv" } or { "header", "value" }.',
  ),
);

/** The query limits of a database pool (`backend: "postgres"`). */
const databaseLimits = {
  maxRows: v.optional(positiveInt, POOL_DATABASE_DEFAULTS.maxRows),
  maxResultBytes: v.optional(positiveInt, POOL_DATABASE_DEFAULTS.maxResultBytes),
  statementTimeoutMs: v.optional(positiveMs, POOL_DATABASE_DEFAULTS.statementTimeoutMs),
};

/** A database pool's read role: its connection string from the environment, or given. */
const DatabaseSchema = v.union(
  [
    v.strictObject(
      {
        /** Name of an environment variable holding the read role's connection string. */
        valueFromEnv: ENV_NAME,
        ...databaseLimits,
      },
      objectMessage,
    ),
    v.strictObject(
      {
        /** The connection string itself. Prefer `valueFromEnv`: it holds a password. */
        value: v.pipe(
          v.string(),
          v.check(
            (value) => connectionStringIssue(value) === null,
            (issue) => connectionStringIssue(String(issue.input)) ?? "",
          ),
        ),
        ...databaseLimits,
      },
      objectMessage,
    ),
  ],
  'Must be { "valueFromEnv" } or { "value" }, with optional maxRows, maxResultBytes, statementTimeoutMs.',
);

const poolFields = {
  name: text(100),
  description: v.optional(
    v.nullable(v.pipe(v.string(), v.maxLength(500), plainText)),
    APPLY_POOL_DEFAULTS.description,
  ),
  subdomain: v.pipe(
    v.string(),
    v.regex(
      /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
      "Use 1-63 lower-case letters, digits and inner hyphens.",
    ),
  ),
  backend: v.optional(v.picklist(["http", "postgres"]), APPLY_POOL_DEFAULTS.backend),
  /** The upstream of an http pool; a postgres pool has none (its `database` says where). */
  origin: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (value) => /^https?:\/\/[^/\s]+/.test(value) && URL.canParse(value),
        "Must be an http:// or https:// URL.",
      ),
      // The proxy sends origin + path + the caller's query: these parts would be dropped.
      v.check(
        (value) => !URL.canParse(value) || noUserInfo(new URL(value)),
        'Must not hold a user name or password: put the upstream\'s auth in "credential".',
      ),
      v.check(
        (value) => !URL.canParse(value) || !/[?#]/.test(value),
        "Must not hold a ?query or #fragment: the caller's own query is sent.",
      ),
      v.transform((value) => value.replace(/\/+$/, "")),
    ),
  ),
  maxConcurrent: positiveInt,
  queue: v.optional(
    v.strictObject(
      {
        size: v.optional(nonNegativeInt, POOL_DEFAULTS.queue.size),
        timeoutMs: v.optional(nonNegativeMs, POOL_DEFAULTS.queue.timeoutMs),
      },
      objectMessage,
    ),
    { ...POOL_DEFAULTS.queue },
  ),
  rpm: v.optional(v.nullable(v.pipe(positiveInt, v.maxValue(MAX_RPM))), POOL_DEFAULTS.rpm),
  requestTimeoutMs: v.optional(positiveMs, POOL_DEFAULTS.requestTimeoutMs),
  termMs: v.optional(positiveMs, POOL_DEFAULTS.termMs),
  renewIntervalMs: v.optional(positiveMs, POOL_DEFAULTS.renewIntervalMs),
  adaptive: v.optional(v.boolean(), POOL_DEFAULTS.adaptive),
  requireKey: v.optional(v.boolean(), APPLY_POOL_DEFAULTS.requireKey),
  allowAuthorizationHeader: v.optional(v.boolean(), APPLY_POOL_DEFAULTS.allowAuthorizationHeader),
  credential: v.optional(v.nullable(CredentialSchema), APPLY_POOL_DEFAULTS.credential),
  database: v.optional(v.nullable(DatabaseSchema), APPLY_POOL_DEFAULTS.database),
  originSigning: v.optional(v.boolean(), APPLY_POOL_DEFAULTS.originSigning),
  readMethods: v.optional(v.array(httpMethod), () => [...APPLY_POOL_DEFAULTS.readMethods]),
  readPaths: v.optional(
    v.nullable(
      v.record(httpMethod, v.array(v.pipe(v.string(), v.startsWith("/", "Must start with /.")))),
    ),
    APPLY_POOL_DEFAULTS.readPaths,
  ),
  /** Caller policies (`docs/caller-policies.md`), checked on top of the key rule. */
  callerPolicies: v.optional(v.nullable(CallerPoliciesSchema), APPLY_POOL_DEFAULTS.callerPolicies),
  metricsRetentionDays: v.optional(
    v.pipe(positiveInt, v.maxValue(3650)),
    APPLY_POOL_DEFAULTS.metricsRetentionDays,
  ),
};

/** What the readPaths rule reads of a pool. */
interface ReadScoped {
  readMethods: readonly string[];
  readPaths: Readonly<Record<string, readonly string[]>> | null;
}

/** The methods `readPaths` scopes that `readMethods` does not list (there it would do nothing). */
function unlistedReadPaths(pool: ReadScoped): string[] {
  return Object.keys(pool.readPaths ?? {}).filter((method) => !pool.readMethods.includes(method));
}

/** `readPaths` only narrows a read method to path prefixes: each of its methods must be one. */
function readPathsNeedReadMethods<TPool extends ReadScoped>() {
  return v.check<TPool, (issue: v.CheckIssue<TPool>) => string>(
    (pool) => unlistedReadPaths(pool).length === 0,
    (issue) => {
      const unlisted = unlistedReadPaths(issue.input);
      return `readPaths: ${unlisted.join(", ")} ${unlisted.length > 1 ? "are" : "is"} not in readMethods, so its prefixes would admit nothing; add it to readMethods (readPaths only narrows a read method to path prefixes).`;
    },
  );
}

/** What the backend rule reads of a pool. */
interface BackendFields {
  backend: "http" | "postgres";
  origin?: string | undefined;
  credential: unknown;
  database: unknown;
}

/** The fields an http pool needs and a postgres pool must not have, and the other way round. */
function backendFieldIssue(pool: BackendFields): string | null {
  if (pool.backend === "http") {
    if (pool.origin === undefined) return "origin: Required for an http pool.";
    if (pool.database) return 'database: Only a postgres pool has one (set "backend": "postgres").';
    return null;
  }
  if (!pool.database) {
    return 'database: Required for a postgres pool: { "valueFromEnv": "<variable holding the read role\'s connection string>" }.';
  }
  if (pool.origin !== undefined) {
    return "origin: A postgres pool has no origin: its database connection says where it goes.";
  }
  if (pool.credential) return "credential: A postgres pool sends no credential header.";
  return null;
}

function backendFieldsMatch<TPool extends BackendFields>() {
  return v.check<TPool, (issue: v.CheckIssue<TPool>) => string>(
    (pool) => backendFieldIssue(pool) === null,
    (issue) => backendFieldIssue(issue.input) ?? "",
  );
}

const UnbudgetedPoolObject = v.strictObject(poolFields, objectMessage);
const UnbudgetedPoolSchema = v.pipe(
  UnbudgetedPoolObject,
  readPathsNeedReadMethods<v.InferOutput<typeof UnbudgetedPoolObject>>(),
  backendFieldsMatch<v.InferOutput<typeof UnbudgetedPoolObject>>(),
);

const BudgetPoolObject = v.strictObject(
  {
    ...poolFields,
    /** Slots of the budget's ceiling kept for this pool. */
    reservedConcurrent: v.optional(nonNegativeInt, APPLY_POOL_DEFAULTS.reservedConcurrent),
  },
  objectMessage,
);
/**
 * One pool of an apply file inside a budget: every field the file knows about a pool. The
 * dashboard's pool form is checked with it, so a pool is valid in both or in neither.
 */
export const BudgetPoolSchema = v.pipe(
  BudgetPoolObject,
  readPathsNeedReadMethods<v.InferOutput<typeof BudgetPoolObject>>(),
  backendFieldsMatch<v.InferOutput<typeof BudgetPoolObject>>(),
  v.check(
    (pool) => pool.reservedConcurrent <= pool.maxConcurrent,
    "reservedConcurrent must not exceed maxConcurrent.",
  ),
);

function noUserInfo(url: URL): boolean {
  return url.username === "" && url.password === "";
}

/** A budget's own fields (the dashboard's budget form checks them with this too). */
export const BUDGET_FIELDS = {
  name: text(100),
  /** Shared ceiling over the budget's pools; null (the default) for none. */
  originMaxConcurrent: v.optional(v.nullable(nonNegativeInt), null),
};

/** A pool's share of its budget's ceiling. */
export const ReservedConcurrentSchema = nonNegativeInt;

const BudgetSchema = v.pipe(
  v.strictObject(
    {
      ...BUDGET_FIELDS,
      pools: v.optional(v.array(BudgetPoolSchema), () => []),
    },
    objectMessage,
  ),
  v.check(
    (budget) =>
      budget.originMaxConcurrent === null ||
      budget.pools.reduce((sum, pool) => sum + pool.reservedConcurrent, 0) <=
        budget.originMaxConcurrent,
    "The pools' reservedConcurrent add up to more than originMaxConcurrent.",
  ),
);

const ApplyFileFields = v.strictObject(
  {
    /** Editors use it for completion; ignored by `sluice apply`. */
    $schema: v.optional(v.string()),
    /** Slug of the team that owns the budgets and pools. */
    team: v.pipe(v.string(), v.minLength(1)),
    budgets: v.optional(v.array(BudgetSchema), () => []),
    /** Pools outside any budget. */
    pools: v.optional(v.array(UnbudgetedPoolSchema), () => []),
  },
  objectMessage,
);

function duplicates(values: readonly string[]): string[] {
  return [...new Set(values.filter((value, index) => values.indexOf(value) !== index))];
}

function budgetNames(file: { budgets: readonly { name: string }[] }): string[] {
  return file.budgets.map((budget) => budget.name);
}

function subdomains(file: Pick<ApplyFile, "budgets" | "pools">): string[] {
  return allPools(file).map(({ pool }) => pool.subdomain);
}

/**
 * The file `sluice apply` reads: the budgets and pools of one team, matched by budget name
 * and pool subdomain. One schema yields the type and the validation; defaults are those of
 * the governor (`POOL_DEFAULTS`) and {@link APPLY_POOL_DEFAULTS}.
 *
 * @example
 * ```ts
 * const file = v.parse(ApplyFileSchema, {
 *   team: "acme",
 *   budgets: [{ name: "llm", originMaxConcurrent: 10, pools: [
 *     { name: "Chat", subdomain: "chat", origin: "http://127.0.0.1:9000", maxConcurrent: 4 },
 *   ] }],
 * });
 * ```
 */
export const ApplyFileSchema = v.pipe(
  ApplyFileFields,
  v.check(
    (file) => duplicates(budgetNames(file)).length === 0,
    (issue) =>
      `Budget names must be unique; repeated: ${duplicates(budgetNames(issue.input)).join(", ")}.`,
  ),
  v.check(
    (file) => duplicates(subdomains(file)).length === 0,
    (issue) =>
      `Pool subdomains must be unique; repeated: ${duplicates(subdomains(issue.input)).join(", ")}.`,
  ),
);

export type ApplyFile = v.InferOutput<typeof ApplyFileFields>;
export type ApplyBudget = ApplyFile["budgets"][number];
/** A pool of the file; `reservedConcurrent` is present on pools inside a budget. */
export type ApplyPool = v.InferOutput<typeof UnbudgetedPoolSchema> & {
  reservedConcurrent?: number;
};
export type ApplyCredential = NonNullable<ApplyPool["credential"]>;
export type ApplyDatabase = NonNullable<ApplyPool["database"]>;

/**
 * Every pool of an apply file with the name of its budget (null for unbudgeted pools).
 *
 * @example
 * ```ts
 * for (const { pool, budgetName } of allPools(file)) console.log(pool.subdomain, budgetName);
 * ```
 */
export function allPools(
  file: Pick<ApplyFile, "budgets" | "pools">,
): { pool: ApplyPool; budgetName: string | null }[] {
  return [
    ...file.budgets.flatMap((budget) =>
      budget.pools.map((pool) => ({ pool, budgetName: budget.name })),
    ),
    ...file.pools.map((pool) => ({ pool, budgetName: null })),
  ];
}
