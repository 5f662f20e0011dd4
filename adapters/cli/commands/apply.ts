import { readFile } from "node:fs/promises";
import * as v from "valibot";
import { InvalidArgumentError } from "../../../src/errors.js";
import { duplicateJsonKeys } from "../../../src/util/json-duplicates.js";
import { type PlannedChange, planApply } from "../apply-plan.js";
import { type ApplyFile, ApplyFileSchema } from "../apply-schema.js";
import { DATA_DIR_OPTION, withCatalog } from "../catalog-session.js";
import type { CliIo, CommandSpec } from "../command.js";

/** Plain words for the usual reasons a file cannot be read (the rest keep Node's message). */
const READ_FAILURES: Readonly<Record<string, string>> = {
  ENOENT: "no such file",
  EISDIR: "it is a directory, not a file",
  EACCES: "permission denied",
};

/**
 * Reads and validates an apply file; every problem is reported with its JSON path.
 *
 * @example
 * ```ts
 * const file = await readApplyFile("examples/sluice.config.json");
 * ```
 */
export async function readApplyFile(path: string): Promise<ApplyFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const reason =
      READ_FAILURES[(error as NodeJS.ErrnoException).code ?? ""] ?? (error as Error).message;
    throw new InvalidArgumentError(`Cannot read ${path}: ${reason}.`);
  }
  let json: unknown;
  try {
    // Editors on Windows save UTF-8 with a byte order mark, which JSON.parse refuses.
    json = JSON.parse(text.startsWith("\uFEFF") ? text.slice(1) : text);
  } catch (error) {
    throw new InvalidArgumentError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  // JSON.parse keeps the last of a repeated name: a setting given twice would vanish unseen.
  const repeated = duplicateJsonKeys(text).map(
    (dotPath) => `${dotPath}: given twice (only the last would count): give it once.`,
  );
  if (repeated.length > 0) {
    throw new InvalidArgumentError(
      `${path} is not a valid Sluice config:\n  ${repeated.join("\n  ")}`,
      repeated,
    );
  }
  const result = v.safeParse(ApplyFileSchema, json);
  if (result.success) return result.output;
  const issues = result.issues.map(
    (issue) => `${v.getDotPath(issue) ?? "(file)"}: ${issue.message}`,
  );
  throw new InvalidArgumentError(
    `${path} is not a valid Sluice config:\n  ${issues.join("\n  ")}`,
    issues,
  );
}

const VERBS: Record<PlannedChange["action"], [done: string, planned: string]> = {
  create: ["Created", "Would create"],
  update: ["Updated", "Would update"],
  unchanged: ["Unchanged", "Unchanged"],
  delete: ["Deleted", "Would delete"],
};

function printChanges(io: CliIo, changes: readonly PlannedChange[], dryRun: boolean): void {
  for (const change of changes) {
    const verb = VERBS[change.action][dryRun ? 1 : 0];
    const detail = change.fields.length > 0 ? `: ${change.fields.join(", ")}` : "";
    io.out(`${verb} ${change.kind} ${change.name}${detail}`);
  }
  const count = (action: PlannedChange["action"]) =>
    changes.filter((c) => c.action === action).length;
  const summary = `${count("create")} to create, ${count("update")} to update, ${count("delete")} to delete, ${count("unchanged")} unchanged`;
  io.out(
    dryRun
      ? `Dry run: ${summary}. Nothing was written.`
      : `Done: ${summary.replaceAll(" to ", " ")}.`,
  );
}

/**
 * `sluice apply`: makes the catalog match a JSON file, idempotently.
 *
 * @example
 * ```ts
 * await runCli(["apply", "examples/sluice.config.json", "--dry-run"], io);
 * ```
 */
export const applyCommand: CommandSpec = {
  name: "apply",
  summary: "Create or update a team's budgets and pools from a JSON file.",
  positionals: ["<file.json>"],
  options: {
    "dry-run": { type: "boolean", description: "Show what would change without writing." },
    prune: {
      type: "boolean",
      description: "Also delete the team's pools and budgets that the file does not list.",
    },
    ...DATA_DIR_OPTION,
  },
  details: [
    "Budgets are matched by name and pools by subdomain; applying the same file twice changes nothing. " +
      "A running server picks changes up within its catalog sync interval (SLUICE_CATALOG_SYNC_MS), " +
      "keeping slots already held.",
    'Keep secrets out of the file: "credential": { "header": "authorization", "valueFromEnv": "OPENAI_AUTH" } ' +
      "reads the value from the environment when apply runs, and stores it encrypted.",
  ],
  examples: [
    "sluice apply examples/sluice.config.json --dry-run",
    'OPENAI_AUTH="Bearer sk-..." sluice apply sluice.config.json',
  ],
  run: async (args, io) => {
    const path = args.positionals[0]!;
    const file = await readApplyFile(path);
    const dryRun = args.values["dry-run"] === true;
    return withCatalog(args, io, async (catalog) => {
      const options = { env: io.env, prune: args.values.prune === true };
      // Planned and written as one transaction: a running server's catalog sync never sees
      // half an apply (a budget without its pools, a ceiling before the reservations under it).
      const plan = dryRun
        ? await planApply(catalog, file, options)
        : await catalog.atomically(async (unit) => {
            const planned = await planApply(unit, file, options);
            await planned.execute();
            return planned;
          });
      io.out(
        dryRun
          ? `Dry run of ${path} for team ${file.team} (nothing is changed):`
          : `Applying ${path} to team ${file.team}:`,
      );
      printChanges(io, plan.changes, dryRun);
      return 0;
    });
  },
};
