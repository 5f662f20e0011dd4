import { createHash } from "node:crypto";
import * as v from "valibot";
import type { BudgetRecord, PoolRecord } from "../../src/catalog/types.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { checkBudgetCeilings } from "../cli/apply-budget-check.js";
import { BUDGET_FIELDS, ReservedConcurrentSchema } from "../cli/apply-schema.js";
import {
  addFieldError,
  type FieldErrorMap,
  type FormBody,
  formText,
  numberField,
} from "./forms.js";

/** The budget form as posted: its fields and the pools it should hold. */
export interface BudgetForm {
  name: string;
  /** As typed: "" for none. */
  originMaxConcurrent: string;
  /** Reservation (as typed) of each member pool, by pool id. */
  members: Map<number, string>;
  /** {@link budgetVersion} when the form was opened; "" when not sent. */
  version: string;
}

/**
 * What a budget form was opened against: a digest of the budget and of every pool of the
 * team, whole (a save moves pools in and out and writes them back whole, so any change to
 * one of them since makes the form stale; `updatedAt` alone would miss two writes within
 * one millisecond). Secrets are in it only as their ciphertext, and only as a digest.
 *
 * @example
 * ```ts
 * budgetVersion(budget, await store.listPools(teamId)); // "q4Yb…" (22 characters)
 * ```
 */
export function budgetVersion(budget: BudgetRecord | null, pools: readonly PoolRecord[]): string {
  return createHash("sha256")
    .update(JSON.stringify([budget, pools]))
    .digest("base64url")
    .slice(0, 22);
}

const BudgetFieldsSchema = v.object(BUDGET_FIELDS);

/** Reads the budget form: `name`, `originMaxConcurrent`, and `member-<id>` / `reserved-<id>` per pool. */
export function readBudgetForm(form: FormBody, pools: readonly PoolRecord[]): BudgetForm {
  const members = new Map<number, string>();
  for (const pool of pools) {
    if (formText(form, `member-${pool.id}`) !== "")
      members.set(pool.id, formText(form, `reserved-${pool.id}`));
  }
  return {
    name: formText(form, "name"),
    originMaxConcurrent: formText(form, "originMaxConcurrent"),
    members,
    version: formText(form, "version"),
  };
}

/** The form of an existing budget (or an empty one). */
export function budgetFormOf(
  budget: BudgetRecord | null,
  pools: readonly PoolRecord[],
): BudgetForm {
  const members = new Map<number, string>();
  for (const pool of pools) {
    if (budget && pool.budgetId === budget.id)
      members.set(pool.id, String(pool.reservedConcurrent));
  }
  return {
    name: budget?.name ?? "",
    originMaxConcurrent:
      budget?.originMaxConcurrent === null || !budget ? "" : String(budget.originMaxConcurrent),
    members,
    version: budgetVersion(budget, pools),
  };
}

/** A valid budget plan: its fields and each member's reservation. */
export interface BudgetPlan {
  name: string;
  originMaxConcurrent: number | null;
  reservations: Map<number, number>;
}

/**
 * Checks the form with the apply file's schemas and the same ceiling rule `sluice apply`
 * enforces (so the page refuses what apply would, with the same message).
 */
export function checkBudgetForm(
  form: BudgetForm,
  pools: readonly PoolRecord[],
  budgets: readonly BudgetRecord[],
  current: BudgetRecord | null,
): { plan: BudgetPlan } | { errors: FieldErrorMap } {
  const errors: FieldErrorMap = {};
  const ceiling = numberField(
    { originMaxConcurrent: form.originMaxConcurrent },
    "originMaxConcurrent",
    errors,
    null,
  );
  // A ceiling that is no whole number has its error already; the schema checks the rest.
  const fields = v.safeParse(BudgetFieldsSchema, {
    name: form.name,
    originMaxConcurrent: ceiling ?? null,
  });
  if (!fields.success) {
    for (const issue of fields.issues)
      addFieldError(errors, v.getDotPath(issue) ?? "", issue.message);
  }
  const reservations = new Map<number, number>();
  for (const [poolId, typed] of form.members) {
    const pool = pools.find((p) => p.id === poolId);
    const field = `reserved-${poolId}`;
    const reserved = typed.trim() === "" ? 0 : numberField({ [field]: typed }, field, errors);
    if (reserved === undefined || reserved === null) continue;
    const parsed = v.safeParse(ReservedConcurrentSchema, reserved);
    if (!parsed.success) addFieldError(errors, field, parsed.issues[0].message);
    else if (pool && parsed.output > pool.maxConcurrent) {
      addFieldError(
        errors,
        `reserved-${poolId}`,
        "reservedConcurrent must not exceed maxConcurrent.",
      );
    } else reservations.set(poolId, parsed.output);
  }
  if (
    fields.success &&
    budgets.some((b) => b.name === fields.output.name && b.id !== current?.id)
  ) {
    addFieldError(errors, "name", "Another budget has this name.");
  }
  if (!fields.success || Object.keys(errors).length > 0) return { errors };
  const plan = { ...fields.output, reservations };
  const nameById = new Map(budgets.map((b) => [b.id, b.name]));
  const desired = pools.map((pool) => {
    const reserved = reservations.get(pool.id);
    if (reserved !== undefined)
      return { subdomain: pool.subdomain, budgetName: plan.name, reservedConcurrent: reserved };
    const stays = pool.budgetId !== null && pool.budgetId !== current?.id;
    return {
      subdomain: pool.subdomain,
      budgetName: stays ? (nameById.get(pool.budgetId!) ?? null) : null,
      reservedConcurrent: stays ? pool.reservedConcurrent : 0,
    };
  });
  try {
    checkBudgetCeilings(
      [{ name: plan.name, originMaxConcurrent: plan.originMaxConcurrent }],
      desired,
      pools,
      budgets,
      false,
    );
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    return { errors: { originMaxConcurrent: [error.message] } };
  }
  return { plan };
}
