import * as v from "valibot";
import { PoolNotFoundError } from "../../../src/errors.js";
import { defineTool, READ_ONLY } from "../tool-kit.js";
import { PoolArgument, PoolDetailSchema } from "./schemas.js";
import { poolDetail, teamPool } from "./team-pool.js";

/** `list_pools`: the team's pools with their limits. */
export const listPoolsTool = defineTool({
  name: "list_pools",
  title: "List pools",
  description: "The team's pools: backend, concurrency limit, queue, RPM gate and budget.",
  scope: "pools:read",
  annotations: READ_ONLY,
  input: v.object({}),
  output: v.object({ pools: v.array(PoolDetailSchema) }),
  async run(_args, access, deps) {
    const store = deps.catalog.store;
    const budgets = new Map(
      (await store.listBudgets(access.teamId)).map((budget) => [budget.id, budget]),
    );
    const pools = await store.listPools(access.teamId);
    return { pools: pools.map((pool) => poolDetail(pool, budgets.get(pool.budgetId ?? -1))) };
  },
});

/** `get_pool`: one pool with its limits. */
export const getPoolTool = defineTool({
  name: "get_pool",
  title: "Get a pool",
  description: "One of the team's pools, by subdomain: limits, backend, queue and RPM gate.",
  scope: "pools:read",
  annotations: READ_ONLY,
  input: v.object({ pool: PoolArgument }),
  output: v.object({ pool: PoolDetailSchema }),
  async run(args, access, deps) {
    const pool = await teamPool(deps, access, args.pool);
    const budget =
      pool.budgetId === null
        ? null
        : await deps.catalog.store.getBudget(access.teamId, pool.budgetId);
    return { pool: poolDetail(pool, budget) };
  },
});

const PoolStatusSchema = v.object({
  pool: v.string(),
  held: v.pipe(v.number(), v.description("Slots held now.")),
  queued: v.pipe(v.number(), v.description("Callers waiting now.")),
  max_concurrent: v.pipe(v.number(), v.description("Configured concurrency limit.")),
  effective_limit: v.pipe(v.number(), v.description("The limit applied now.")),
  learned_limit: v.pipe(
    v.nullable(v.number()),
    v.description("Concurrency learned from upstream throttling, or null."),
  ),
  rpm_limit: v.pipe(v.nullable(v.number()), v.description("Configured RPM gate, or null.")),
  learned_rpm: v.pipe(v.nullable(v.number()), v.description("RPM learned, or null.")),
  admitted_last_minute: v.pipe(
    v.number(),
    v.description("Requests admitted in the last minute (what the RPM gate counts)."),
  ),
  paused_until: v.pipe(
    v.nullable(v.string()),
    v.description("When a Retry-After pause ends (ISO-8601), or null."),
  ),
});

/** `get_pool_status`: the live figures of one pool, from the governor. */
export const getPoolStatusTool = defineTool({
  name: "get_pool_status",
  title: "Get a pool's live status",
  description:
    "Live figures of a pool: slots held, callers queued, effective and learned limits, pause and RPM use.",
  scope: "pools:read",
  annotations: { ...READ_ONLY, idempotentHint: false },
  input: v.object({ pool: PoolArgument }),
  output: PoolStatusSchema,
  async run(args, access, deps) {
    const pool = await teamPool(deps, access, args.pool);
    const status = await deps.governor.status(pool.subdomain).catch((error: unknown) => {
      if (error instanceof PoolNotFoundError) {
        throw new PoolNotFoundError(pool.subdomain, `Pool "${pool.subdomain}" is not live yet.`);
      }
      throw error;
    });
    const now = deps.clock.now();
    const { pausedUntil } = status.learned;
    return {
      pool: pool.subdomain,
      held: status.held,
      queued: status.queued,
      max_concurrent: status.settings.maxConcurrent,
      effective_limit: status.effectiveLimit,
      learned_limit: status.learned.concurrency,
      rpm_limit: status.settings.rpm,
      learned_rpm: status.learned.rpm,
      admitted_last_minute: deps.metrics.totals(pool.subdomain, now - 60_000, now).admitted,
      paused_until: pausedUntil > now ? new Date(pausedUntil).toISOString() : null,
    };
  },
});
