import type { AccessLog } from "../../../src/access-log/types.js";
import type { PoolKeyRecord, PoolRecord } from "../../../src/catalog/types.js";
import type { Clock } from "../../../src/clock/clock.js";
import type { Governor } from "../../../src/governor/types.js";
import type { OutcomeReport } from "../../../src/learning/types.js";
import { logFailed, logGranted } from "../lock/access-attempt.js";
import { clientGoneSignal } from "../lock/node-bindings.js";
import type { WaitRequest } from "../lock/wait-options.js";
import { holdSlot, type SlotHold } from "./slot-hold.js";

/** A caller admitted to a pool host (proxied HTTP or SQL), asking for one of its slots. */
export interface SlotAdmission {
  governor: Governor;
  clock: Clock;
  accessLog: AccessLog | undefined;
  pool: PoolRecord;
  key: PoolKeyRecord | null;
  remoteAddress: string | null;
  /** What the caller asked (`waitRequest(headers)`), parsed before anything slow. */
  wait: WaitRequest;
  request: Request;
  env: unknown;
}

/**
 * Takes a slot of the pool for a request on its host, the way every pool host does: the
 * caller's `X-Svc-Queue-Timeout-Ms` / `X-Svc-No-Queue`, else the pool's queue (a stock client
 * that cannot add headers still gets the queue it was given); the attempt goes to the access
 * log (source `proxy`), granted or not. Rejects like `governor.acquire` (429, 504, 503,
 * aborted when the client leaves the queue). A granted attempt is logged when the hold ends,
 * so its entry carries the upstream's status (`upstreamStatus`) in the same single append:
 * no second write, no update of a stored row.
 *
 * @example
 * ```ts
 * const hold = await admitToSlot({ governor, clock, accessLog, pool, key, remoteAddress, wait, request, env });
 * try { await work(); } finally { hold.end({ status: 200 }); }
 * ```
 */
export async function admitToSlot(admission: SlotAdmission): Promise<SlotHold> {
  const { governor, clock, accessLog, pool, key, wait, request, env } = admission;
  const caller = {
    pool: pool.subdomain,
    keyId: key?.id ?? null,
    remoteAddress: admission.remoteAddress,
    source: "proxy" as const,
  };
  const startedAt = clock.now();
  let hold: SlotHold;
  try {
    const waitMs = wait.waitMs ?? (pool.queueSize > 0 ? pool.queueTimeoutMs : 0);
    // Only a request that may queue needs a signal to leave the queue with.
    const mayQueue = !wait.noQueue && waitMs > 0;
    const signal = mayQueue ? clientGoneSignal(env, request) : undefined;
    hold = await holdSlot(governor, pool.subdomain, { waitMs, noQueue: wait.noQueue, signal });
  } catch (error) {
    logFailed(accessLog, caller, clock.now(), startedAt, error);
    throw error;
  }
  if (!accessLog) return hold;
  const grantedAt = clock.now();
  return endingWith(hold, (outcome) =>
    logGranted(accessLog, caller, grantedAt, hold.grant, outcome?.status ?? null),
  );
}

/** `hold`, calling `onEnd` with the outcome on its first `end` only. */
function endingWith(hold: SlotHold, onEnd: (outcome?: OutcomeReport) => void): SlotHold {
  let ended = false;
  return {
    grant: hold.grant,
    signal: hold.signal,
    onAbort: (listener) => hold.onAbort(listener),
    end(outcome) {
      hold.end(outcome);
      if (ended) return;
      ended = true;
      onEnd(outcome);
    },
  };
}
