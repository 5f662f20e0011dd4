import * as v from "valibot";
import { BudgetNotFoundError } from "../../../src/errors.js";
import { BudgetSchema } from "../../hono/control/resource-schemas.js";
import { serializeBudget } from "../../hono/control/serializers.js";
import { defineTool, READ_ONLY } from "../tool-kit.js";
import { wholeNumberArgument } from "./schemas.js";

/** `list_budgets`: the team's capacity budgets. */
export const listBudgetsTool = defineTool({
  name: "list_budgets",
  title: "List budgets",
  description: "The team's capacity budgets: member pool ids, ceiling and unallocated capacity.",
  scope: "budgets:read",
  annotations: READ_ONLY,
  input: v.object({}),
  output: v.object({ budgets: v.array(BudgetSchema) }),
  async run(_args, access, deps) {
    const store = deps.catalog.store;
    const pools = await store.listPools(access.teamId);
    const budgets = await store.listBudgets(access.teamId);
    return { budgets: budgets.map((budget) => serializeBudget(budget, pools)) };
  },
});

/** `get_budget`: one budget of the team, by id. */
export const getBudgetTool = defineTool({
  name: "get_budget",
  title: "Get a budget",
  description: "One of the team's budgets, by id.",
  scope: "budgets:read",
  annotations: READ_ONLY,
  input: v.object({
    budget_id: wholeNumberArgument(
      "budget_id",
      1,
      Number.MAX_SAFE_INTEGER,
      "The budget's id, as list_budgets shows it.",
    ),
  }),
  output: v.object({ budget: BudgetSchema }),
  async run(args, access, deps) {
    const store = deps.catalog.store;
    const budget = await store.getBudget(access.teamId, args.budget_id);
    if (!budget) throw new BudgetNotFoundError(String(args.budget_id));
    return { budget: serializeBudget(budget, await store.listPools(access.teamId)) };
  },
});
