import {
  AbortedError,
  QueueTimeoutError,
  RejectedError,
  type RejectionReason,
} from "../../src/errors.js";
import type { SlotGrant } from "../../src/governor/types.js";
import {
  type OutcomeSpec,
  POOL_NAMES,
  type PoolName,
  type RunPlan,
  type SignalKind,
} from "./governor-plan.js";
import type { GrantRecord } from "./recording-store.js";

const RPM_WINDOW_MS = 60_000;

/** Where a caller's acquire stands: waiting, holding, or ended (and how). */
export type TicketState =
  | "pending"
  | "granted"
  | "released"
  | "expired"
  | "rejected"
  | "timedOut"
  | "aborted";

/** One caller's acquire, followed from the call to its end. */
export interface Ticket {
  index: number;
  pool: PoolName;
  askedAt: number;
  /** The wait the governor should ask the store for (clamped, 0 for fail-fast). */
  waitMs: number;
  signal: SignalKind;
  controller: AbortController | undefined;
  /** True once the caller aborted while the ticket was still waiting. */
  abortedWhileWaiting: boolean;
  abortedAt?: number;
  stateAtAbort?: TicketState;
  storeSlotId: string | undefined;
  state: TicketState;
  grant: SlotGrant | undefined;
  /** The model's own lease arithmetic (SEMANTICS), not the store's word. */
  leaseDeadline: number;
  requestDeadline: number;
  rejection: { reason: RejectionReason; retryAfterMs: number } | undefined;
}

/** What keeps a pool from granting now, in SEMANTICS order. */
export type Obstacle = "concurrency" | "budget" | "paused" | "rpm";

/** What the pool learned from release outcomes (adaptive is off: never a concurrency). */
export interface ModelLearned {
  rpm: number | null;
  pausedUntil: number;
}

/** A change of a pool's gates, to judge each grant by the gates of its own instant. */
interface GateChange {
  at: number;
  rpm: number | null;
  pausedUntil: number;
}

/** What an acquire must answer, by SEMANTICS; `aborted` for a signal aborted beforehand. */
export type Prediction =
  | { type: "granted" }
  | { type: "queued" }
  | { type: "aborted" }
  | { type: "rejected"; reason: RejectionReason; retryAfterMs?: number };

/**
 * The reference model: what every caller holds or waits for, and what SEMANTICS says the
 * next acquire must answer. Grants come from the caller's side (resolved promises); the RPM
 * log comes from the store's grant records, since a grant counts even when the caller is gone.
 */
export class GovernorModel {
  readonly tickets: Ticket[] = [];
  readonly violations: string[] = [];
  readonly ceiling: Record<PoolName, number>;
  readonly learned: Record<PoolName, ModelLearned>;
  private readonly gateChanges: Record<PoolName, GateChange[]>;
  private readonly grantedIds = new Set<string>();
  private grantsChecked = 0;

  constructor(
    readonly plan: RunPlan,
    private readonly grantLog: readonly GrantRecord[],
  ) {
    this.ceiling = { a: 0, b: 0, c: 0 };
    for (const pool of POOL_NAMES) this.ceiling[pool] = plan.pools[pool].maxConcurrent;
    this.learned = {
      a: { rpm: null, pausedUntil: 0 },
      b: { rpm: null, pausedUntil: 0 },
      c: { rpm: null, pausedUntil: 0 },
    };
    this.gateChanges = { a: [], b: [], c: [] };
    for (const pool of POOL_NAMES) this.noteGates(pool, Number.NEGATIVE_INFINITY);
  }

  /** The limits a released slot's outcome teaches (see the learner's rules). */
  learn(pool: PoolName, outcome: OutcomeSpec, now: number): void {
    const learned = this.learned[pool];
    if (outcome.kind === "pause") {
      learned.pausedUntil = Math.max(learned.pausedUntil, now + outcome.retryAfterMs);
    } else {
      learned.rpm = outcome.limit;
    }
    this.noteGates(pool, now);
  }

  /** Records the gates in force from `at` on. */
  private noteGates(pool: PoolName, at: number): void {
    const { pausedUntil } = this.learned[pool];
    this.gateChanges[pool].push({ at, rpm: this.effectiveRpm(pool), pausedUntil });
  }

  effectiveRpm(pool: PoolName): number | null {
    const configured = this.plan.pools[pool].rpm;
    const learned = this.learned[pool].rpm;
    if (configured === null) return learned;
    return learned === null ? configured : Math.min(configured, learned);
  }

  limit(pool: PoolName): number {
    return this.plan.pools[pool].maxConcurrent;
  }

  holding(pool: PoolName): Ticket[] {
    return this.tickets.filter((t) => t.pool === pool && t.state === "granted");
  }

  holdingAnywhere(): Ticket[] {
    return this.tickets.filter((t) => t.state === "granted");
  }

  waiting(pool: PoolName): Ticket[] {
    return this.tickets.filter((t) => t.pool === pool && t.state === "pending");
  }

  /** Marks slots whose lease ran out; returns them (the store must have reclaimed them). */
  expire(now: number): Ticket[] {
    const expired = this.tickets.filter((t) => t.state === "granted" && t.leaseDeadline <= now);
    for (const ticket of expired) ticket.state = "expired";
    return expired;
  }

  obstacle(pool: PoolName, now: number): Obstacle | null {
    if (this.holding(pool).length >= this.limit(pool)) return "concurrency";
    if (!this.budgetAdmits(pool)) return "budget";
    if (now < this.learned[pool].pausedUntil) return "paused";
    if (this.rpmOpensIn(pool, now) > 0) return "rpm";
    return null;
  }

  /** When the later of the pause and the RPM turn is over. */
  gateOpensIn(pool: PoolName, now: number): number {
    return Math.max(0, this.learned[pool].pausedUntil - now, this.rpmOpensIn(pool, now));
  }

  /** SEMANTICS acquire steps 1-3, for a caller asking the store with wait `waitMs`. */
  predict(pool: PoolName, waitMs: number, now: number): Prediction {
    const { queueSize } = this.plan.pools[pool];
    const queued = this.waiting(pool).length;
    if (queued > 0) {
      if (waitMs === 0) {
        const obstacle = this.obstacle(pool, now);
        if (obstacle === "paused" || obstacle === "rpm") {
          return { type: "rejected", reason: obstacle, retryAfterMs: this.gateOpensIn(pool, now) };
        }
        return { type: "rejected", reason: "concurrency" };
      }
      return queued >= queueSize ? { type: "rejected", reason: "queue_full" } : { type: "queued" };
    }
    const obstacle = this.obstacle(pool, now);
    if (obstacle === null) return { type: "granted" };
    const canQueue = waitMs > 0 && queueSize > 0;
    if (obstacle === "concurrency" || obstacle === "budget") {
      return canQueue ? { type: "queued" } : { type: "rejected", reason: obstacle };
    }
    const opensIn = this.gateOpensIn(pool, now);
    if (canQueue && opensIn <= waitMs) return { type: "queued" };
    return { type: "rejected", reason: obstacle, retryAfterMs: opensIn };
  }

  /**
   * 0 when the window has room, else the time until enough grants leave it for one more:
   * the oldest counted grant when the window holds exactly `rpm` (the usual case), the
   * `rpm`-th most recent one when a lowered gate left more in the window.
   */
  rpmOpensIn(pool: PoolName, now: number): number {
    const rpm = this.effectiveRpm(pool);
    if (rpm === null) return 0;
    const counted = this.grantsInWindow(pool, now);
    if (counted.length < rpm) return 0;
    return counted[counted.length - rpm]! + RPM_WINDOW_MS - now;
  }

  /**
   * Judges every grant not yet judged by the gates of its instant: none in a pause, and never
   * more than the RPM in force within its window. A change at the very instant of a grant may
   * come after it (a release hands over before its outcome is learned), so ties are lenient.
   */
  checkGrantGates(): string[] {
    const problems: string[] = [];
    for (; this.grantsChecked < this.grantLog.length; this.grantsChecked++) {
      const grant = this.grantLog[this.grantsChecked]!;
      const pool = grant.pool as PoolName;
      const gates = this.gatesAt(pool, grant.acquiredAt);
      if (gates.every((g) => grant.acquiredAt < g.pausedUntil)) {
        problems.push(`${grant.slotId} granted in ${pool} during a pause`);
      }
      const inWindow = this.grantsInWindow(pool, grant.acquiredAt).length;
      if (gates.every((g) => g.rpm !== null && inWindow > g.rpm)) {
        problems.push(
          `${grant.slotId}: ${inWindow} grants in ${pool}'s 60 s window (rpm ${gates[0]!.rpm})`,
        );
      }
    }
    return problems;
  }

  /** Grant times of the pool in `(now − 60 s, now]`, oldest first. */
  private grantsInWindow(pool: PoolName, now: number): number[] {
    return this.grantLog
      .filter((g) => g.pool === pool && g.acquiredAt > now - RPM_WINDOW_MS && g.acquiredAt <= now)
      .map((g) => g.acquiredAt)
      .sort((x, y) => x - y);
  }

  /** The gates in force just before `at`, and any set at `at` itself. */
  private gatesAt(pool: PoolName, at: number): GateChange[] {
    const changes = this.gateChanges[pool];
    let before = changes[0]!;
    for (const change of changes) if (change.at < at) before = change;
    return [before, ...changes.filter((change) => change.at === at)];
  }

  heldInBudget(): number {
    return this.holding("a").length + this.holding("b").length;
  }

  private budgetAdmits(pool: PoolName): boolean {
    const { origin, reserved } = this.plan;
    if (pool === "c" || origin === null) return true;
    const heldA = this.holding("a").length;
    const heldB = this.holding("b").length;
    if (heldA + heldB >= origin) return false;
    const held = pool === "a" ? heldA : heldB;
    if (held < reserved[pool]) return true;
    const unallocated = Math.max(0, origin - reserved.a - reserved.b);
    const borrowed = Math.max(0, heldA - reserved.a) + Math.max(0, heldB - reserved.b);
    return borrowed < unallocated;
  }

  /** The caller's promise resolved. */
  onGranted(ticket: Ticket, grant: SlotGrant, now: number): void {
    const pool = this.plan.pools[ticket.pool];
    const acquiredAt = grant.requestDeadline - pool.requestTimeoutMs;
    const problems: string[] = [];
    if (ticket.abortedWhileWaiting) problems.push("an aborted waiter got a slot");
    if (grant.slotId !== ticket.storeSlotId) problems.push(`slot id is not the one asked for`);
    if (this.grantedIds.has(grant.slotId)) problems.push(`slot id ${grant.slotId} granted twice`);
    if (acquiredAt < ticket.askedAt || acquiredAt > now) problems.push(`grant time ${acquiredAt}`);
    if (grant.queuedMs !== acquiredAt - ticket.askedAt) problems.push(`queuedMs ${grant.queuedMs}`);
    if (grant.leaseDeadline !== Math.min(acquiredAt + pool.termMs, grant.requestDeadline)) {
      problems.push(`leaseDeadline ${grant.leaseDeadline}`);
    }
    if (grant.termMs !== pool.termMs) problems.push(`termMs ${grant.termMs}`);
    if (grant.queuedMs > 0) this.checkFifo(ticket, acquiredAt, problems);
    for (const problem of problems) this.violate(ticket, `${problem}: ${JSON.stringify(grant)}`);
    this.grantedIds.add(grant.slotId);
    ticket.state = "granted";
    ticket.grant = grant;
    ticket.leaseDeadline = grant.leaseDeadline;
    ticket.requestDeadline = grant.requestDeadline;
  }

  /** The caller's promise rejected. */
  onFailed(ticket: Ticket, error: unknown): void {
    if (error instanceof RejectedError) {
      ticket.state = "rejected";
      ticket.rejection = { reason: error.reason, retryAfterMs: error.retryAfterMs };
    } else if (error instanceof QueueTimeoutError) {
      ticket.state = "timedOut";
    } else if (error instanceof AbortedError) {
      ticket.state = "aborted";
    } else {
      ticket.state = "rejected";
      this.violate(ticket, `failed with an unexpected error: ${String(error)}`);
    }
  }

  violate(ticket: Ticket, message: string): void {
    this.violations.push(`ticket #${ticket.index} (${ticket.pool}): ${message}`);
  }

  /** A waiter handed a slot must have no earlier caller of its pool still waiting for one. */
  private checkFifo(ticket: Ticket, acquiredAt: number, problems: string[]): void {
    for (const earlier of this.waiting(ticket.pool)) {
      if (earlier.index >= ticket.index) break;
      const withdrawing =
        earlier.abortedWhileWaiting || earlier.askedAt + earlier.waitMs < acquiredAt;
      if (!withdrawing) problems.push(`overtook earlier waiter #${earlier.index}`);
    }
  }
}
