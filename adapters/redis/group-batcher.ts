import type { PoolRoute } from "./group-runner.js";
import type { ReplyFields, ScriptResult } from "./replies.js";
import type { ScriptRunner } from "./script-runner.js";
import type { GroupScriptName } from "./scripts.js";

/** The operations several of which can share one script call (`lua/batch.lua`). */
const BATCH_CODES: Partial<Record<GroupScriptName, string>> = {
  acquire: "a",
  release: "r",
  renew: "n",
  cancel: "c",
};

/**
 * Calls of one group on the wire at once. Two let Redis run one batch while this process
 * reads the answer of the other and gathers the next one: a ping-pong of single batches
 * leaves each side idle half the time (and a woken Redis runs a script about twice as slowly
 * as a busy one). Waiting calls are split evenly over the free places, so two lanes of
 * callers settle in. Measured with `npm run bench:redis`: two beat one and three or four.
 */
export const MAX_IN_FLIGHT = 2;
/** Operations in one batch at most, so one call never blocks Redis for long. */
export const MAX_BATCH = 256;

/** One call waiting for its turn in its group. */
interface QueuedCall {
  readonly script: GroupScriptName;
  readonly route: PoolRoute;
  readonly args: readonly string[];
  /** The script's `now` argument ('' in TIME mode), fixed when the call was made. */
  readonly now: string;
  resolve(result: ScriptResult): void;
  reject(error: unknown): void;
}

/** A group's calls not sent yet, and how many of its calls are on the wire. */
interface GroupLine {
  readonly waiting: QueuedCall[];
  inFlight: number;
  scheduled: boolean;
}

/** What {@link GroupBatcher} needs from the runner around it. */
export interface GroupBatcherDeps {
  runner: ScriptRunner;
  originId: string;
  /**
   * Handles a reply before its callers get their results (events, wake-up); answers where
   * the result starts.
   */
  onReply(route: PoolRoute, fields: ReplyFields): number;
  /** Maps a failure to reach Redis (StoreUnavailableError); called once per failed call. */
  onError(error: unknown, route: PoolRoute): unknown;
}

/**
 * Sends a group's script calls in submission order and coalesces the acquire, release,
 * renew and cancel calls that wait for their turn into one `batch` script call, which
 * applies them in that order atomically and answers one result per call. A call made while
 * fewer than {@link MAX_IN_FLIGHT} calls of its group are on the wire goes out at the end of
 * the same tick (alone: its own script, one round trip, no delay); calls made meanwhile wait
 * for a place and go together. Calls on the wire are applied in the order they were sent (one
 * connection). Other scripts (definitions, serve, snapshot) go alone, in their turn, so the
 * group's order of effects is the order of the calls.
 *
 * @example
 * ```ts
 * const batcher = new GroupBatcher(deps);
 * const result = await batcher.submit("acquire", route, [slotId, "0"], "");
 * ```
 */
export class GroupBatcher {
  private readonly lines = new Map<string, GroupLine>();

  constructor(private readonly deps: GroupBatcherDeps) {}

  submit(
    script: GroupScriptName,
    route: PoolRoute,
    args: readonly string[],
    now: string,
  ): Promise<ScriptResult> {
    let line = this.lines.get(route.base);
    if (!line) {
      line = { waiting: [], inFlight: 0, scheduled: false };
      this.lines.set(route.base, line);
    }
    const result = new Promise<ScriptResult>((resolve, reject) => {
      line.waiting.push({ script, route, args, now, resolve, reject });
    });
    if (!line.scheduled && line.inFlight < MAX_IN_FLIGHT) {
      // Sent at the end of this tick: calls made in the same tick share one batch.
      line.scheduled = true;
      const base = route.base;
      queueMicrotask(() => this.flush(base));
    }
    return result;
  }

  /** Sends what waits in the group while fewer than MAX_IN_FLIGHT calls are on the wire. */
  private flush(base: string): void {
    const line = this.lines.get(base);
    if (!line) return;
    line.scheduled = false;
    while (line.inFlight < MAX_IN_FLIGHT && line.waiting.length > 0) {
      line.inFlight++;
      // This call and each free place after it take an even share of what waits.
      const share = Math.ceil(line.waiting.length / (MAX_IN_FLIGHT - line.inFlight + 1));
      const calls = takeTurn(line.waiting, Math.min(share, MAX_BATCH));
      const sent = calls.length === 1 ? this.sendAlone(calls[0]!) : this.sendBatch(calls);
      sent.then(
        () => this.done(base, line),
        () => this.done(base, line),
      );
    }
  }

  private done(base: string, line: GroupLine): void {
    line.inFlight--;
    if (line.waiting.length > 0) this.flush(base);
    else if (line.inFlight === 0) this.lines.delete(base);
  }

  private async sendAlone(call: QueuedCall): Promise<void> {
    const { runner, originId } = this.deps;
    const { route } = call;
    let fields: ReplyFields;
    try {
      fields = (await runner.run(runner.scripts.group[call.script], route.base, [
        call.now,
        originId,
        route.enc,
        route.pool,
        ...call.args,
      ])) as ReplyFields;
    } catch (error) {
      call.reject(this.deps.onError(error, route));
      return;
    }
    let at: number;
    try {
      at = this.deps.onReply(route, fields);
    } catch (error) {
      call.reject(error);
      return;
    }
    call.resolve({ fields, at });
  }

  private async sendBatch(calls: readonly QueuedCall[]): Promise<void> {
    const { runner, originId } = this.deps;
    const route = calls[0]!.route;
    const args: string[] = [calls[0]!.now, originId, "", ""];
    for (const call of calls) {
      args.push(
        BATCH_CODES[call.script]!,
        call.now,
        call.route.enc,
        call.args[0]!,
        call.args[1] ?? "",
      );
    }
    let fields: ReplyFields;
    try {
      fields = (await runner.run(runner.scripts.group.batch, route.base, args)) as ReplyFields;
    } catch (error) {
      const wrapped = this.deps.onError(error, route);
      for (const call of calls) call.reject(wrapped);
      return;
    }
    let at: number;
    try {
      // 'batch' and the count, then per call its field count and its result.
      at = this.deps.onReply(route, fields) + 2;
    } catch (error) {
      // A listener that threw: the calls were applied, but their callers hear of it.
      for (const call of calls) call.reject(error);
      return;
    }
    for (const call of calls) {
      call.resolve({ fields, at: at + 1 });
      at += 1 + (fields[at] as number);
    }
  }
}

/** The calls that go out next: a run of up to `max` batchable calls, or one other call. */
function takeTurn(waiting: QueuedCall[], max: number): QueuedCall[] {
  let end = 0;
  while (end < waiting.length && end < max && BATCH_CODES[waiting[end]!.script]) end++;
  return waiting.splice(0, Math.max(end, 1));
}
