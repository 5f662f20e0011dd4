import { flushMicrotasks } from "../../src/clock/manual-clock.js";
import { SlotCappedError, SlotNotFoundError } from "../../src/errors.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import type { Governor } from "../../src/governor/types.js";
import { checkEmpty, checkInvariants } from "./governor-invariants.js";
import { GovernorModel, type Prediction, type Ticket } from "./governor-model.js";
import {
  BUDGET,
  type Command,
  type OutcomeSpec,
  outcomeReport,
  POOL_NAMES,
  poolSettings,
  type RunPlan,
} from "./governor-plan.js";
import { RecordingStore } from "./recording-store.js";
import type { StoreHarness } from "./store-fixture.js";

type AcquireCommand = Extract<Command, { kind: "acquire" }>;

/**
 * Plays `steps` of `plan` on a fresh harness, checking the invariants after setup and after
 * every step, then drains; the property and every recorded regression run through here.
 */
export async function playScenario(
  makeHarness: () => Promise<StoreHarness>,
  plan: RunPlan,
  steps: readonly Command[],
): Promise<void> {
  const harness = await makeHarness();
  // Resizes mutate the plan; fast-check replays the same value while shrinking.
  const scenario = new GovernorScenario(harness, structuredClone(plan));
  try {
    await scenario.setup();
    await scenario.checkInvariants();
    for (const [index, command] of steps.entries()) {
      await scenario.run(index, command);
      await scenario.checkInvariants();
    }
    await scenario.drain();
  } finally {
    await scenario.close();
    await harness.cleanup();
  }
}

/**
 * One property run: a governor over a recording store, the reference model beside it, and the
 * checks that must hold after every step. Any breach throws with the step that caused it.
 */
export class GovernorScenario {
  readonly store: RecordingStore;
  readonly governor: Governor;
  readonly model: GovernorModel;
  private step = "setup";
  private readonly abortsToCheck: Ticket[] = [];

  constructor(
    private readonly harness: StoreHarness,
    readonly plan: RunPlan,
  ) {
    this.store = new RecordingStore(harness.store, harness.clock);
    this.governor = createGovernor({ store: this.store, clock: harness.clock });
    this.model = new GovernorModel(plan, this.store.grantLog);
  }

  now(): number {
    return this.harness.clock.now();
  }

  async setup(): Promise<void> {
    await this.governor.defineBudget(BUDGET, { originMaxConcurrent: this.plan.origin });
    for (const pool of POOL_NAMES)
      await this.governor.definePool(pool, poolSettings(this.plan, pool));
  }

  async run(index: number, command: Command): Promise<void> {
    this.step = `step ${index}: ${JSON.stringify(command)}`;
    switch (command.kind) {
      case "acquire":
        await this.acquire(command);
        return;
      case "release":
        return this.release(this.pickGranted(command.pick, command.live), command.outcome);
      case "renew":
        return this.renew(this.pickGranted(command.pick, command.live));
      case "abort":
        return this.abort(command.pick, command.waiting, command.delayMs);
      case "advance":
        return this.advance(command.ms);
      case "resize":
        this.plan.pools[command.pool].maxConcurrent = command.maxConcurrent;
        await this.governor.definePool(command.pool, poolSettings(this.plan, command.pool));
        return this.settle();
    }
  }

  async close(): Promise<void> {
    await this.governor.close();
  }

  async acquire(command: AcquireCommand): Promise<Ticket> {
    const { pool } = command;
    const now = this.now();
    const waitMs = command.noQueue
      ? 0
      : Math.min(command.waitMs ?? 0, this.plan.pools[pool].queueTimeoutMs);
    const prediction: Prediction =
      command.signal === "aborted" ? { type: "aborted" } : this.model.predict(pool, waitMs, now);
    const controller = command.signal === "none" ? undefined : new AbortController();
    if (command.signal === "aborted") controller?.abort();
    const ticket: Ticket = {
      index: this.model.tickets.length,
      pool,
      askedAt: now,
      waitMs,
      signal: command.signal,
      controller,
      abortedWhileWaiting: command.signal === "aborted",
      storeSlotId: undefined,
      state: "pending",
      grant: undefined,
      leaseDeadline: 0,
      requestDeadline: 0,
      rejection: undefined,
    };
    this.model.tickets.push(ticket);
    this.store.onAcquire = (storePool, request) => {
      if (ticket.storeSlotId !== undefined || storePool !== pool) {
        this.model.violate(ticket, `unexpected store acquire in ${storePool}`);
      }
      ticket.storeSlotId = request.slotId;
      if (request.waitMs !== waitMs && this.plan.pools[pool].queueSize > 0) {
        this.model.violate(ticket, `store asked with waitMs ${request.waitMs}, expected ${waitMs}`);
      }
    };
    this.governor
      .acquire(pool, {
        waitMs: command.waitMs,
        noQueue: command.noQueue,
        signal: controller?.signal,
      })
      .then(
        (grant) => this.model.onGranted(ticket, grant, this.now()),
        (error: unknown) => this.model.onFailed(ticket, error),
      );
    if (controller && command.abortAfterMs !== null && command.signal === "live") {
      this.harness.clock.setTimeout(() => this.abortNow(ticket), command.abortAfterMs);
    }
    await this.settle();
    this.store.onAcquire = undefined;
    this.checkPrediction(ticket, prediction);
    return ticket;
  }

  private checkPrediction(ticket: Ticket, prediction: Prediction): void {
    const expected = prediction.type === "queued" ? "pending" : prediction.type;
    if (ticket.state !== expected) {
      const got = ticket.rejection ? `${ticket.state} (${ticket.rejection.reason})` : ticket.state;
      this.fail(`#${ticket.index}: expected ${JSON.stringify(prediction)}, got ${got}`);
    }
    if (prediction.type !== "rejected" || !ticket.rejection) return;
    const { reason, retryAfterMs } = ticket.rejection;
    if (reason !== prediction.reason) {
      this.fail(`#${ticket.index}: rejected for ${reason}, expected ${prediction.reason}`);
    }
    if (prediction.retryAfterMs !== undefined && retryAfterMs !== prediction.retryAfterMs) {
      this.fail(
        `#${ticket.index}: retryAfterMs ${retryAfterMs}, expected ${prediction.retryAfterMs}`,
      );
    }
    if (!(retryAfterMs >= 0)) this.fail(`#${ticket.index}: retryAfterMs ${retryAfterMs}`);
  }

  /** A ticket for release or renew: one still held, or any that was ever granted. */
  private pickGranted(pick: number, live: boolean): Ticket | undefined {
    const candidates = live
      ? this.model.holdingAnywhere()
      : this.model.tickets.filter((t) => t.grant !== undefined);
    return candidates[pick % Math.max(1, candidates.length)];
  }

  async release(ticket: Ticket | undefined, outcome: OutcomeSpec | null): Promise<void> {
    if (!ticket?.grant) return;
    const now = this.now();
    const expected = ticket.state === "granted" && ticket.leaseDeadline > now;
    const report = outcome ? outcomeReport(outcome) : undefined;
    const result = await this.governor.release(ticket.pool, ticket.grant.slotId, report);
    if (result.released !== expected) {
      this.fail(`release of #${ticket.index} (${ticket.state}) answered ${result.released}`);
    }
    if (result.released) {
      ticket.state = "released";
      // Only a slot actually released teaches anything.
      if (outcome) this.model.learn(ticket.pool, outcome, now);
    }
    await this.settle();
  }

  async renew(ticket: Ticket | undefined): Promise<void> {
    if (!ticket?.grant) return;
    const now = this.now();
    const live = ticket.state === "granted" && ticket.leaseDeadline > now;
    const capped = live && ticket.leaseDeadline >= ticket.requestDeadline;
    const termMs = this.plan.pools[ticket.pool].termMs;
    const expected = live && !capped ? Math.min(now + termMs, ticket.requestDeadline) : undefined;
    const outcome = await this.governor.renew(ticket.pool, ticket.grant.slotId).then(
      (value) => value,
      (error: unknown) => error,
    );
    const label = `renew of #${ticket.index} (${ticket.state})`;
    if (!live && !(outcome instanceof SlotNotFoundError)) this.fail(`${label}: ${String(outcome)}`);
    if (capped && !(outcome instanceof SlotCappedError)) this.fail(`${label}: ${String(outcome)}`);
    if (expected !== undefined) {
      const leaseDeadline = (outcome as { leaseDeadline?: number }).leaseDeadline;
      if (leaseDeadline !== expected)
        this.fail(`${label}: lease ${leaseDeadline}, expected ${expected}`);
      ticket.leaseDeadline = expected;
    }
    await this.settle();
  }

  /** Aborts a caller now, or later on the clock (so it can land amid store timers). */
  async abort(pick: number, waiting: boolean, delayMs: number): Promise<void> {
    const candidates = this.model.tickets.filter(
      (t) => t.controller && !t.controller.signal.aborted && (!waiting || t.state === "pending"),
    );
    const ticket = candidates[pick % Math.max(1, candidates.length)];
    if (!ticket) return;
    if (delayMs > 0) {
      this.harness.clock.setTimeout(() => this.abortNow(ticket), delayMs);
      return;
    }
    this.abortNow(ticket);
    await this.settle();
  }

  private abortNow(ticket: Ticket): void {
    if (!ticket.controller || ticket.controller.signal.aborted) return;
    ticket.abortedAt = this.now();
    ticket.stateAtAbort = ticket.state;
    if (ticket.state === "pending") ticket.abortedWhileWaiting = true;
    ticket.controller.abort();
    this.abortsToCheck.push(ticket);
  }

  async advance(ms: number): Promise<void> {
    await this.harness.clock.advance(ms);
    await this.settle();
  }

  /**
   * Ends the run: every waiter leaves (abort or timeout), every slot is released, time passes
   * every deadline and window. Then each pool must be empty and admit again as SEMANTICS says:
   * no slot was lost or leaked along the way.
   */
  async drain(): Promise<void> {
    this.step = "drain";
    const longestWait = Math.max(...POOL_NAMES.map((p) => this.plan.pools[p].queueTimeoutMs));
    for (let round = 0; round < 10; round++) {
      for (const ticket of this.model.tickets) {
        if (ticket.state === "pending") this.abortNow(ticket);
      }
      await this.settle();
      for (const ticket of this.model.holdingAnywhere()) {
        const result = await this.governor.release(ticket.pool, ticket.grant!.slotId);
        if (!result.released) this.fail(`drain: release of held #${ticket.index} answered false`);
        ticket.state = "released";
        await this.settle();
      }
      await this.checkInvariants();
      if (!this.model.tickets.some((t) => t.state === "pending")) break;
      await this.advance(longestWait + 1);
      await this.checkInvariants();
    }
    await this.advance(61_000);
    await this.checkInvariants();
    await checkEmpty(this);
    for (const pool of POOL_NAMES) {
      const ticket = await this.acquire({
        kind: "acquire",
        pool,
        waitMs: 0,
        noQueue: false,
        signal: "none",
        abortAfterMs: null,
      });
      if (ticket.state !== "granted") continue;
      const result = await this.governor.release(pool, ticket.grant!.slotId);
      if (!result.released) this.fail(`drain: release of #${ticket.index} answered false`);
      ticket.state = "released";
    }
    await this.settle();
    await checkEmpty(this);
  }

  /** Lets the governor and the store finish everything the last step set in motion. */
  async settle(): Promise<void> {
    for (let round = 0; round < 3; round++) {
      await flushMicrotasks();
      await this.store.whenIdle();
    }
    await flushMicrotasks();
  }

  /** Every rule that must hold between steps (see governor-invariants.ts). */
  checkInvariants(): Promise<void> {
    return checkInvariants(this, this.abortsToCheck);
  }

  /** Throws on any breach, naming the step that caused it. */
  fail(message: string): never {
    throw new Error(`${this.step}\n  ${message}`);
  }
}
