import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { masters, nodeFor, type RedisClient } from "./cluster.js";
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
  | "inspect"
  | "renew"
  | "cancel"
  | "upsert-pool"
  | "retire-pool"
  | "remove-pool"
  | "upsert-budget"
  | "set-learned"
  | "serve"
  | "snapshot"
  | "batch"
  | "rejoin"
  | "adopt";

const GROUP_SCRIPTS: readonly GroupScriptName[] = [
  "acquire",
  "release",
  "inspect",
  "renew",
  "cancel",
  "upsert-pool",
  "retire-pool",
  "remove-pool",
  "upsert-budget",
  "set-learned",
  "serve",
  "snapshot",
  "batch",
  "rejoin",
  "adopt",
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
  try {
    return readFileSync(join(directory, `${name}.lua`), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    // Most often an app bundled with esbuild, webpack or the like: the bundle moved, its Lua
    // files did not.
    throw new Error(
      `The Redis store's Lua scripts are not in ${directory}. An app bundled with Sluice ` +
        "inside must ship them: copy node_modules/sluice/dist/lua to a lua/ directory next " +
        "to the bundle.",
      { cause: error },
    );
  }
}

/** A top-level piece of `lib.lua`: a `local function` (with its leading comment) or other code. */
interface LibraryPart {
  readonly name: string | null;
  readonly text: string;
  /** The code without comments, where references to other functions are looked for. */
  readonly code: string;
}

const FUNCTION_START = /^local function ([A-Za-z_][A-Za-z0-9_]*)/;

function withoutComments(text: string): string {
  return text.replace(/--.*$/gm, "");
}

/**
 * Splits the library into its top-level functions (each from `local function` at column 0,
 * with the comment lines right above it, to the next `end` at column 0) and the code between
 * them.
 */
export function splitLibrary(library: string): LibraryPart[] {
  const parts: LibraryPart[] = [];
  const lines = library.split("\n");
  let loose: string[] = [];
  const flushLoose = (keep: number) => {
    const text = loose.slice(0, keep).join("\n");
    if (text.trim() !== "") parts.push({ name: null, text, code: withoutComments(text) });
    loose = loose.slice(keep);
  };
  for (let i = 0; i < lines.length; i++) {
    const start = FUNCTION_START.exec(lines[i]!);
    if (!start) {
      loose.push(lines[i]!);
      continue;
    }
    let comments = loose.length;
    while (comments > 0 && loose[comments - 1]!.startsWith("--")) comments--;
    flushLoose(comments);
    let end = i;
    while (end < lines.length && !/^end\b/.test(lines[end]!)) end++;
    const text = [...loose, ...lines.slice(i, end + 1)].join("\n");
    loose = [];
    parts.push({
      name: start[1]!,
      text,
      code: withoutComments(lines.slice(i, end + 1).join("\n")),
    });
    i = end;
  }
  flushLoose(loose.length);
  return parts;
}

/**
 * The library as one operation needs it: every function the operation reaches (directly
 * or through other functions), in library order, plus all top-level code. Lua builds a
 * closure for every `local function` on every call, so unused ones are left out.
 */
export function libraryFor(parts: readonly LibraryPart[], operation: string): string {
  const needed = new Set<LibraryPart>(parts.filter((part) => part.name === null));
  const scanned = [withoutComments(operation), ...[...needed].map((part) => part.code)];
  for (let grew = true; grew; ) {
    grew = false;
    for (const part of parts) {
      if (needed.has(part)) continue;
      const reference = new RegExp(`\\b${part.name}\\b`);
      if (scanned.some((code) => reference.test(code))) {
        needed.add(part);
        scanned.push(part.code);
        grew = true;
      }
    }
  }
  return parts
    .filter((part) => needed.has(part))
    .map((part) => part.text)
    .join("\n");
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
 * prelude, the part of the shared library the operation uses, and the operation.
 *
 * @example
 * ```ts
 * const { group } = loadScripts();
 * await redis.evalsha(group.acquire.sha, 1, base, args);
 * ```
 */
export function loadScripts(): ScriptSet {
  if (loaded) return loaded;
  const directory = luaDirectory();
  const library = splitLibrary(readLua(directory, "lib"));
  const group = {} as Record<GroupScriptName, LuaScript>;
  for (const name of GROUP_SCRIPTS) {
    const operation = readLua(directory, name);
    group[name] = toScript(
      name,
      `${LUA_KEY_PRELUDE}${libraryFor(library, operation)}\n${operation}`,
    );
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
 * const reply = await runner.run(scripts.group.renew, base, args);
 * ```
 */
export class ScriptRunner {
  readonly stats: RoundTripStats = { roundTrips: 0, scriptReloads: 0 };

  constructor(
    private readonly redis: RedisClient,
    readonly scripts: ScriptSet,
  ) {}

  /** Runs a script on its one key (every script touches one group, or one home pointer). */
  async run(script: LuaScript, key: string, args: readonly string[]): Promise<unknown> {
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

  /** Sends a plain command through the same counters. */
  async command<T>(send: (redis: RedisClient) => Promise<T>): Promise<T> {
    this.stats.roundTrips++;
    return send(this.redis);
  }

  /**
   * Loads every script into the server's cache (at connect), so calls by SHA hit at once: on
   * every master of a cluster (a master promoted later answers NOSCRIPT once, see `run`), or
   * only on the one holding the hash tag `at` (a shard back after an outage).
   */
  async preload(at: string | null = null): Promise<void> {
    await Promise.all(masters(nodeFor(this.redis, at)).map((node) => this.preloadOn(node)));
  }

  private async preloadOn(node: Redis): Promise<void> {
    const pipeline = node.pipeline();
    for (const script of this.scripts.all) pipeline.script("LOAD", script.text);
    this.stats.roundTrips++;
    // A pipeline answers each command's error in its results instead of rejecting.
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error !== null);
    if (failed) throw failed[0];
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("NOSCRIPT");
}
