import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { LUA_KEY_PRELUDE } from "./keys.js";

/** One Lua script: its full text and the SHA1 Redis knows it by. */
export interface LuaScript {
  readonly name: string;
  readonly text: string;
  readonly sha: string;
}

/** The operations that run as one group script (key prelude + `lib.lua` + the operation). */
export type GroupScriptName =
  | "acquire"
  | "release"
  | "renew"
  | "cancel"
  | "upsert-pool"
  | "retire-pool"
  | "remove-pool"
  | "upsert-budget"
  | "set-learned"
  | "serve"
  | "snapshot";

const GROUP_SCRIPTS: readonly GroupScriptName[] = [
  "acquire",
  "release",
  "renew",
  "cancel",
  "upsert-pool",
  "retire-pool",
  "remove-pool",
  "upsert-budget",
  "set-learned",
  "serve",
  "snapshot",
];

/**
 * Where the `.lua` files are: next to this module in the source tree, and in `dist/lua/`
 * next to the bundle after a build (tsup must copy `adapters/redis/lua/*.lua` there).
 * CommonJS builds have no `import.meta.url`, ESM has no `__dirname`.
 */
function luaDirectory(): string {
  return typeof __dirname === "string"
    ? join(__dirname, "lua")
    : fileURLToPath(new URL("./lua/", import.meta.url));
}

function readLua(directory: string, name: string): string {
  return readFileSync(join(directory, `${name}.lua`), "utf8");
}

function toScript(name: string, text: string): LuaScript {
  return { name, text, sha: createHash("sha1").update(text).digest("hex") };
}

/** Every script, read once per process. */
export interface ScriptSet {
  readonly group: Readonly<Record<GroupScriptName, LuaScript>>;
  readonly home: LuaScript;
  readonly all: readonly LuaScript[];
}

let loaded: ScriptSet | undefined;

/**
 * Reads the Lua files (once per process) and assembles each group script from the key
 * prelude, the shared library and the operation.
 *
 * @example
 * ```ts
 * const { group } = loadScripts();
 * await redis.evalsha(group.acquire.sha, 1, base, ...args);
 * ```
 */
export function loadScripts(): ScriptSet {
  if (loaded) return loaded;
  const directory = luaDirectory();
  const library = readLua(directory, "lib");
  const group = {} as Record<GroupScriptName, LuaScript>;
  for (const name of GROUP_SCRIPTS) {
    group[name] = toScript(name, `${LUA_KEY_PRELUDE}${library}\n${readLua(directory, name)}`);
  }
  const home = toScript("home", readLua(directory, "home"));
  loaded = { group, home, all: [...Object.values(group), home] };
  return loaded;
}

/** Counters of the commands sent, for benchmarks (`roundTrips` per acquire) and status. */
export interface RoundTripStats {
  /** Commands sent to Redis, each one network round trip. */
  roundTrips: number;
  /** Scripts re-sent in full after a NOSCRIPT answer (the server had lost its script cache). */
  scriptReloads: number;
}

/**
 * Runs scripts by SHA (`EVALSHA`), falling back to `EVAL` (which also caches the script on
 * the server) when the server answers NOSCRIPT, e.g. after a restart or `SCRIPT FLUSH`.
 *
 * @example
 * ```ts
 * const runner = new ScriptRunner(redis, loadScripts());
 * const reply = await runner.run(scripts.group.renew, [base], args);
 * ```
 */
export class ScriptRunner {
  readonly stats: RoundTripStats = { roundTrips: 0, scriptReloads: 0 };

  constructor(
    private readonly redis: Redis,
    readonly scripts: ScriptSet,
  ) {}

  async run(script: LuaScript, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    this.stats.roundTrips++;
    try {
      return await this.redis.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      this.stats.roundTrips++;
      this.stats.scriptReloads++;
      return await this.redis.eval(script.text, keys.length, ...keys, ...args);
    }
  }

  /** Sends a plain command through the same counters. */
  async command<T>(send: (redis: Redis) => Promise<T>): Promise<T> {
    this.stats.roundTrips++;
    return send(this.redis);
  }

  /** Loads every script into the server's cache (at connect), so calls by SHA hit at once. */
  async preload(): Promise<void> {
    const pipeline = this.redis.pipeline();
    for (const script of this.scripts.all) pipeline.script("LOAD", script.text);
    this.stats.roundTrips++;
    await pipeline.exec();
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("NOSCRIPT");
}
