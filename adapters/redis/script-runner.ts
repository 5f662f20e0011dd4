import type { Redis } from "ioredis";
import { masters, nodeFor, type RedisClient } from "./cluster.js";
import type { LuaScript, ScriptSet } from "./scripts.js";

/** Counters of the commands sent, for benchmarks (`roundTrips` per acquire) and status. */
export interface RoundTripStats {
  /** Commands sent to Redis, each one network round trip. */
  roundTrips: number;
  /**
   * Times the server had lost the code: the Functions library loaded again after "function
   * not found" (a restart without persistence, `FUNCTION FLUSH`), or a script re-sent in full
   * after NOSCRIPT (`SCRIPT FLUSH`, where Functions are unavailable).
   */
  scriptReloads: number;
}

/** How operations are called: undecided until `preload`, which settles it. */
type CallMode = "functions" | "scripts";

/**
 * Runs the store's Lua operations. Where the server has Redis Functions (Redis >= 7, the
 * command allowed), the whole library is loaded once per server (`FUNCTION LOAD`, on every
 * master of a cluster) and each operation is one `FCALL`: the library's helper functions are
 * built once per load instead of once per call. Else each operation is its own script, run by
 * SHA (`EVALSHA`), falling back to `EVAL` (which also caches it) on NOSCRIPT.
 *
 * A server that lost the library (restart without persistence, `FUNCTION FLUSH`, a master
 * that joined later) answers "function not found": the library is loaded again on every
 * master and the call sent once more, as NOSCRIPT is handled for scripts.
 *
 * @example
 * ```ts
 * const runner = new ScriptRunner(redis, loadScripts());
 * await runner.preload();
 * const reply = await runner.run(runner.scripts.group.renew, base, args);
 * ```
 */
export class ScriptRunner {
  readonly stats: RoundTripStats = { roundTrips: 0, scriptReloads: 0 };
  /** Scripts until `preload` finds Functions everywhere (scripts work on any server). */
  private mode: CallMode = "scripts";
  /** A library load under way, shared by the calls that found the library missing. */
  private reloading: Promise<void> | null = null;

  constructor(
    private readonly redis: RedisClient,
    readonly scripts: ScriptSet,
  ) {}

  /** Whether operations go by `FCALL` (else `EVALSHA`), for status and tests. */
  get usesFunctions(): boolean {
    return this.mode === "functions";
  }

  /** Runs an operation on its one key (every operation touches one group, or one home pointer). */
  async run(script: LuaScript, key: string, args: readonly string[]): Promise<unknown> {
    if (this.mode === "scripts") return this.runScript(script, key, args);
    try {
      return await this.call(script, key, args);
    } catch (error) {
      if (!isFunctionNotFound(error)) throw error;
    }
    this.stats.scriptReloads++;
    await this.reload();
    if (this.mode === "functions") {
      try {
        return await this.call(script, key, args);
      } catch (error) {
        // A master the client did not know of yet: this once, as a script.
        if (!isFunctionNotFound(error)) throw error;
      }
    }
    return this.runScript(script, key, args);
  }

  /** Sends a plain command through the same counters. */
  async command<T>(send: (redis: RedisClient) => Promise<T>): Promise<T> {
    this.stats.roundTrips++;
    return send(this.redis);
  }

  /**
   * Loads the code at connect, so the first calls find it: the Functions library on every
   * master, or, where a server refuses Functions, every script into the script cache. With
   * `at` (a hash tag), only on the master holding it: a shard back after an outage, while the
   * others keep what they have (the call mode changes only if that master refuses Functions).
   */
  async preload(at: string | null = null): Promise<void> {
    const nodes = masters(nodeFor(this.redis, at));
    const loaded = await Promise.all(nodes.map((node) => this.loadLibrary(node)));
    const everywhere = loaded.every(Boolean);
    if (at === null) this.mode = everywhere ? "functions" : "scripts";
    else if (!everywhere) this.mode = "scripts";
    if (this.mode === "scripts") await Promise.all(nodes.map((node) => this.loadScripts(node)));
  }

  private call(script: LuaScript, key: string, args: readonly string[]): Promise<unknown> {
    this.stats.roundTrips++;
    return this.redis.fcall(script.fn, 1, key, ...args);
  }

  private async runScript(script: LuaScript, key: string, args: readonly string[]) {
    this.stats.roundTrips++;
    try {
      // ioredis flattens the array: KEYS[1] = key, ARGV = args.
      return await this.redis.evalsha(script.sha, 1, [key, ...args]);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      this.stats.roundTrips++;
      this.stats.scriptReloads++;
      return await this.redis.eval(script.text, 1, [key, ...args]);
    }
  }

  private reload(): Promise<void> {
    this.reloading ??= this.preload().finally(() => {
      this.reloading = null;
    });
    return this.reloading;
  }

  /** Loads the library on one server; false where Functions are unavailable there. */
  private async loadLibrary(node: Redis): Promise<boolean> {
    this.stats.roundTrips++;
    try {
      await node.function("LOAD", this.scripts.library.text);
      return true;
    } catch (error) {
      const message = error instanceof Error ? error.message : "";
      // Its name is a hash of its code: the library there is this very one.
      if (message.includes("already exists")) return true;
      if (FUNCTIONS_REFUSED.test(message)) return false;
      throw error;
    }
  }

  private async loadScripts(node: Redis): Promise<void> {
    const pipeline = node.pipeline();
    for (const script of this.scripts.all) pipeline.script("LOAD", script.text);
    this.stats.roundTrips++;
    // A pipeline answers each command's error in its results instead of rejecting.
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error !== null);
    if (failed) throw failed[0];
  }
}

/**
 * Answers of a server without Functions: an older Redis or a fork ("unknown command"), or an
 * ACL or a managed service that does not allow them (NOPERM, a renamed command).
 */
const FUNCTIONS_REFUSED = /unknown command|unknown subcommand|NOPERM|not allowed|disabled/i;

function isFunctionNotFound(error: unknown): boolean {
  return error instanceof Error && /function not found/i.test(error.message);
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("NOSCRIPT");
}
