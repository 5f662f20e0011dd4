import type {
  AcquireOptions,
  Governor,
  RunContext,
  SlotGrant,
} from "../../../src/governor/types.js";
import type { OutcomeReport } from "../../../src/learning/types.js";

/** A slot held across an asynchronous exchange (a streamed proxied response). */
export interface SlotHold {
  readonly grant: SlotGrant;
  /** Aborts when the caller's signal aborts, the slot hits its request deadline, or is lost. */
  readonly signal: AbortSignal;
  /** Calls `listener` when `signal` would abort, without making the signal; answers the unsubscribe. */
  onAbort(listener: (reason: unknown) => void): () => void;
  /** Releases the slot, reporting `outcome` when given. Only the first call counts. */
  end(outcome?: OutcomeReport): void;
}

/**
 * Takes a slot through `governor.run`, so the governor keeps renewing its lease for as long
 * as it is held (a streamed response may outlive several terms), and hands it back open:
 * the slot is released when `end` is called, not when this function returns. Rejects like
 * `governor.acquire` (429, 504, aborted, unknown pool).
 *
 * @example
 * ```ts
 * const hold = await holdSlot(governor, "llm", { waitMs: 5000, signal });
 * const stop = hold.onAbort((reason) => upstream.abort(reason));
 * try { await work(); } finally { stop(); hold.end({ status: 200 }); }
 * ```
 */
export function holdSlot(
  governor: Governor,
  pool: string,
  options: AcquireOptions,
): Promise<SlotHold> {
  return new Promise((resolve, reject) => {
    let granted = false;
    governor
      .run(
        pool,
        (context) =>
          new Promise<void>((finish) => {
            granted = true;
            resolve(new RunHold(context, finish));
          }),
        options,
      )
      .catch((error: unknown) => {
        // After the grant, run() only settles once `end` was called; release never throws.
        if (!granted) reject(error);
      });
  });
}

/** A {@link SlotHold} over a `run()` whose work is "until `end` is called". */
class RunHold implements SlotHold {
  private ended = false;

  constructor(
    private readonly context: RunContext,
    private readonly finish: () => void,
  ) {}

  get grant(): SlotGrant {
    return this.context.grant;
  }

  get signal(): AbortSignal {
    return this.context.signal;
  }

  onAbort(listener: (reason: unknown) => void): () => void {
    return this.context.onAbort(listener);
  }

  end(outcome?: OutcomeReport): void {
    if (this.ended) return;
    this.ended = true;
    if (outcome !== undefined) this.context.report(outcome);
    this.finish();
  }
}
