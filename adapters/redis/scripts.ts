import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LUA_KEY_PRELUDE } from "./keys.js";

/** One Lua script: its full text and the SHA1 Redis knows it by. */
export interface LuaScript {
  readonly name: string;
  readonly text: string;
  readonly sha: string;
  /** Its function in the Functions library (see {@link ScriptSet.library}). */
  readonly fn: string;
}

/**
 * Every script as one Redis Functions library: loaded once per server (`FUNCTION LOAD`), its
 * helper functions are built once per load instead of once per call. Its name carries a hash
 * of its code, so processes of different versions sharing a Redis each find their own.
 */
export interface FunctionLibrary {
  readonly name: string;
  /** The `FUNCTION LOAD` payload (`#!lua name=...` first). */
  readonly text: string;
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
 * `import.meta.url` first: an ES module can still see a global `__dirname` (`node -e` sets one
 * to "."); a CommonJS build without it (esbuild's) falls back to `__dirname`.
 */
function luaDirectory(): string {
  return typeof import.meta.url === "string"
    ? fileURLToPath(new URL("./lua/", import.meta.url))
    : join(__dirname, "lua");
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

function sha1(text: string): string {
  return createHash("sha1").update(text).digest("hex");
}

/** Every group operation starts its call's state (see `begin` in `lib.lua`). */
const BEGIN = "begin(KEYS, ARGV)\n";

/**
 * The library: key prelude, the whole of `lib.lua`, then one function per operation whose
 * body is the operation's script (`KEYS` and `ARGV` become its parameters). The names of the
 * library and of its functions end with a hash of all that code.
 */
function buildLibrary(
  library: string,
  operations: ReadonlyMap<string, string>,
): { library: FunctionLibrary; functionNames: Map<string, string> } {
  const version = sha1([LUA_KEY_PRELUDE, library, ...operations.values()].join("\n")).slice(0, 16);
  const functionNames = new Map<string, string>();
  const parts = [LUA_KEY_PRELUDE, library];
  for (const [name, body] of operations) {
    // Function names take letters, digits and '_' only.
    const fn = `sluice_${name.replace(/-/g, "_")}_${version}`;
    functionNames.set(name, fn);
    parts.push(`redis.register_function('${fn}', function(KEYS, ARGV)\n${body}\nend)`);
  }
  const name = `sluice_${version}`;
  return { library: { name, text: `#!lua name=${name}\n${parts.join("\n")}\n` }, functionNames };
}

/** Every script, read once per process. */
export interface ScriptSet {
  readonly group: Readonly<Record<GroupScriptName, LuaScript>>;
  readonly home: LuaScript;
  readonly all: readonly LuaScript[];
  readonly library: FunctionLibrary;
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
  const libraryText = readLua(directory, "lib");
  const parts = splitLibrary(libraryText);
  const operations = new Map<string, string>();
  for (const name of GROUP_SCRIPTS) operations.set(name, BEGIN + readLua(directory, name));
  operations.set("home", readLua(directory, "home"));
  const { library, functionNames } = buildLibrary(libraryText, operations);
  const toScript = (name: string, text: string): LuaScript => ({
    name,
    text,
    sha: sha1(text),
    fn: functionNames.get(name)!,
  });
  const group = {} as Record<GroupScriptName, LuaScript>;
  for (const name of GROUP_SCRIPTS) {
    const operation = operations.get(name)!;
    group[name] = toScript(name, `${LUA_KEY_PRELUDE}${libraryFor(parts, operation)}\n${operation}`);
  }
  const home = toScript("home", operations.get("home")!);
  loaded = { group, home, all: [...Object.values(group), home], library };
  return loaded;
}
