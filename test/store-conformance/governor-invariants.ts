import type { GovernorModel, Ticket } from "./governor-model.js";
import { POOL_NAMES, type PoolName, type RunPlan } from "./governor-plan.js";
import type { RecordingStore } from "./recording-store.js";

/** What the checks read from a running scenario. */
export interface ScenarioView {
  readonly model: GovernorModel;
  readonly store: RecordingStore;
  readonly plan: RunPlan;
  now(): number;
  /** Throws, naming the step that caused the breach. */
  fail(message: string): never;
}

/**
 * Every rule that must hold between steps: no store or model violation, aborts honoured,
 * unrenewed leases reclaimed and reported, each pool's holders and waiters exactly the
 * callers', held within the limit, Σ held within the budget origin.
 *
 * @example
 * ```ts
 * await scenario.run(index, command);
 * await checkInvariants(scenario, abortsToCheck);
 * ```
 */
export async function checkInvariants(ctx: ScenarioView, abortsToCheck: Ticket[]): Promise<void> {
  const violations = [
    ...ctx.store.violations,
    ...ctx.model.violations,
    ...ctx.model.checkGrantGates(),
  ];
  if (violations.length > 0) ctx.fail(violations.join("\n  "));
  checkAborts(ctx, abortsToCheck);
  const now = ctx.now();
  for (const ticket of ctx.model.expire(now)) {
    if (!ctx.store.reclaimedIds.has(ticket.grant!.slotId)) {
      ctx.fail(
        `#${ticket.index}'s lease ran out at ${ticket.leaseDeadline} but no reclaim was reported`,
      );
    }
  }
  for (const pool of POOL_NAMES) await checkPool(ctx, pool, now);
  if (ctx.plan.origin !== null && ctx.model.heldInBudget() > ctx.plan.origin) {
    ctx.fail(`budget holds ${ctx.model.heldInBudget()} > origin ${ctx.plan.origin}`);
  }
}

/** After the drain: nobody waits or holds, and every pool is empty. */
export async function checkEmpty(ctx: ScenarioView): Promise<void> {
  const unsettled = ctx.model.tickets.filter((t) => t.state === "pending" || t.state === "granted");
  if (unsettled.length > 0) ctx.fail(`tickets never settled: ${unsettled.map((t) => t.index)}`);
  for (const pool of POOL_NAMES) {
    const snapshot = await ctx.store.snapshot(pool);
    const empty = { held: 0, queued: 0, slotIds: [], waiterIds: [] };
    const actual = snapshot && {
      held: snapshot.held,
      queued: snapshot.queued,
      slotIds: snapshot.slotIds,
      waiterIds: snapshot.waiterIds,
    };
    if (JSON.stringify(actual) !== JSON.stringify(empty)) {
      ctx.fail(`${pool} is not empty after the drain: ${JSON.stringify(snapshot)}`);
    }
  }
}

/** An abort while waiting ends the wait (a timeout already under way may win); later, nothing. */
function checkAborts(ctx: ScenarioView, abortsToCheck: Ticket[]): void {
  for (const ticket of abortsToCheck.splice(0)) {
    const abortedAt = ticket.abortedAt!;
    if (ticket.stateAtAbort !== "pending") {
      if (ticket.state !== ticket.stateAtAbort) {
        ctx.fail(`aborting #${ticket.index} after it settled changed it to ${ticket.state}`);
      }
      continue;
    }
    const timingOut = ticket.askedAt + ticket.waitMs <= abortedAt;
    if (ticket.state !== "aborted" && !(timingOut && ticket.state === "timedOut")) {
      ctx.fail(`#${ticket.index} aborted at ${abortedAt} while waiting, but is ${ticket.state}`);
    }
  }
}

async function checkPool(ctx: ScenarioView, pool: PoolName, now: number): Promise<void> {
  const snapshot = await ctx.store.snapshot(pool);
  if (!snapshot) return ctx.fail(`pool ${pool} vanished`);
  const holders = ctx.model.holding(pool).map((t) => t.grant!.slotId);
  const shadow = ctx.store.liveHolders(pool, now).map((h) => h.slotId);
  if (!sameMembers(snapshot.slotIds, holders) || !sameList(snapshot.slotIds, shadow)) {
    ctx.fail(`${pool} holders: store ${snapshot.slotIds}, callers ${holders}, shadow ${shadow}`);
  }
  const waiters = ctx.model.waiting(pool).map((t) => t.storeSlotId);
  if (!sameList(snapshot.waiterIds, waiters)) {
    ctx.fail(`${pool} waiters: store ${snapshot.waiterIds}, callers ${waiters}`);
  }
  if (snapshot.held !== snapshot.slotIds.length || snapshot.queued !== snapshot.waiterIds.length) {
    ctx.fail(`${pool} figures disagree with ids: ${JSON.stringify(snapshot)}`);
  }
  if (snapshot.queued > ctx.plan.pools[pool].queueSize) ctx.fail(`${pool} queue over queueSize`);
  const limit = ctx.model.limit(pool);
  if (snapshot.limit !== limit) ctx.fail(`${pool} limit ${snapshot.limit}, expected ${limit}`);
  // A tighter limit never revokes slots, so the ceiling only comes down as slots leave.
  if (snapshot.held > Math.max(limit, ctx.model.ceiling[pool])) {
    ctx.fail(`${pool} holds ${snapshot.held} above its limit ${limit}`);
  }
  ctx.model.ceiling[pool] = Math.max(limit, snapshot.held);
  const learned = { concurrency: null, ...ctx.model.learned[pool] };
  if (JSON.stringify(snapshot.learned) !== JSON.stringify(learned)) {
    ctx.fail(
      `${pool} learned ${JSON.stringify(snapshot.learned)}, expected ${JSON.stringify(learned)}`,
    );
  }
  checkWaiters(ctx, pool, now);
}

/** Waiters are within their wait budget, and never wait while the pool could serve them. */
function checkWaiters(ctx: ScenarioView, pool: PoolName, now: number): void {
  const waiting = ctx.model.waiting(pool);
  for (const ticket of waiting) {
    if (ticket.askedAt + ticket.waitMs <= now)
      ctx.fail(`#${ticket.index} waits past its wait budget`);
  }
  const obstacle = ctx.model.obstacle(pool, now);
  if (waiting.length > 0 && obstacle === null) {
    ctx.fail(`${pool} has a free slot while #${waiting[0]!.index} waits`);
  }
}

function sameList(left: readonly unknown[], right: readonly unknown[]): boolean {
  return left.length === right.length && left.every((value, i) => value === right[i]);
}

function sameMembers(left: readonly string[], right: readonly string[]): boolean {
  return sameList([...left].sort(), [...right].sort());
}
