import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import { describe, expect, it } from "vitest";

/**
 * The package as users get it: `dist/` imported by name through the `exports` map, in a
 * separate Node process (ESM and CommonJS). `.ci/run` builds before testing; locally, run
 * `npm run build` first (a missing build skips loudly, and fails under CI).
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const dist = join(root, "dist");
const built = existsSync(join(dist, "index.js"));
if (!built) {
  const message = "dist/ is missing: run `npm run build` before the package tests.";
  if (process.env.CI === "true") throw new Error(message);
  console.warn(`\n!!! ${message} Skipping. !!!\n`);
}

/** Runs `code` in a fresh Node process inside the repository, so `sluice` resolves to itself. */
function node(code: string, type: "module" | "commonjs"): string {
  return execFileSync(process.execPath, [`--input-type=${type}`, "-e", code], {
    cwd: root,
    encoding: "utf8",
  }).trim();
}

/** Every bare module specifier reachable from `entry` through static imports. */
function staticDependencies(entry: string): Set<string> {
  const bare = new Set<string>();
  const seen = new Set<string>();
  const pending = [entry];
  for (let file = pending.pop(); file; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(join(dist, file), "utf8");
    for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?['"]([^'"]+)['"]/g)) {
      const specifier = match[1] as string;
      if (specifier.startsWith("./")) pending.push(specifier.slice(2));
      else bare.add(specifier);
    }
  }
  return bare;
}

describe.skipIf(!built)("the built package", () => {
  it("exposes the core, the testing helpers and every adapter subpath to ESM importers", () => {
    const exported = node(
      `const core = await import("sluice");
       const testing = await import("sluice/testing");
       const redis = await import("sluice/redis");
       const hono = await import("sluice/hono");
       const sqlite = await import("sluice/sqlite");
       const server = await import("sluice/server");
       console.log(JSON.stringify({
         core: ["createGovernor", "MemorySlotStore", "verifySignature", "MemoryAccessLogStore", "RejectedError", "SecretUnreadableError", "parseRateLimitHeaders"].filter((name) => typeof core[name] === "function"),
         testing: typeof testing.ManualClock,
         redis: [typeof redis.createRedisGovernor, typeof redis.createRedisSlotStore],
         adapters: [Object.keys(hono).length > 0, Object.keys(sqlite).length > 0, Object.keys(server).length > 0],
       }));`,
      "module",
    );
    expect(JSON.parse(exported)).toEqual({
      core: [
        "createGovernor",
        "MemorySlotStore",
        "verifySignature",
        "MemoryAccessLogStore",
        "RejectedError",
        "SecretUnreadableError",
        "parseRateLimitHeaders",
      ],
      testing: "function",
      redis: ["function", "function"],
      adapters: [true, true, true],
    });
  });

  it("works from CommonJS and governs a call end to end", () => {
    const answer = node(
      `const { createGovernor } = require("sluice");
       const governor = createGovernor();
       governor.definePool("p", { maxConcurrent: 1 })
         .then(() => governor.run("p", () => "ran"))
         .then((value) => { console.log(value); return governor.close(); });`,
      "commonjs",
    );
    expect(answer).toBe("ran");
  });

  it("recognises a Sluice error of the other build (ESM and CommonJS loaded side by side)", () => {
    const answer = node(
      `import { createRequire } from "node:module";
       const esm = await import("sluice");
       const esmHono = await import("sluice/hono");
       const cjs = createRequire(import.meta.url)("sluice");
       const cjsHono = createRequire(import.meta.url)("sluice/hono");
       const fromEsm = new esm.RejectedError("concurrency", 1000, 4);
       const fromCjs = new cjs.RejectedError("concurrency", 1000, 4);
       console.log(JSON.stringify([
         esm.SluiceError !== cjs.SluiceError,
         fromCjs instanceof esm.SluiceError, fromEsm instanceof cjs.SluiceError,
         esmHono.statusForError(fromCjs), cjsHono.statusForError(fromEsm),
         new Error("x") instanceof esm.SluiceError, fromEsm instanceof esm.PoolNotFoundError,
       ]));`,
      "module",
    );
    expect(JSON.parse(answer)).toEqual([true, true, true, 429, 429, false, false]);
  });

  it("finds the Redis store's Lua scripts from CommonJS and from ESM", () => {
    // The store reads its scripts when it is created, before it connects (port 1: nobody).
    const create = `const store = createRedisSlotStore({ url: "redis://127.0.0.1:1" });
       console.log(store.kind);
       process.exit(0);`;
    expect(
      node(`const { createRedisSlotStore } = require("sluice/redis");\n${create}`, "commonjs"),
    ).toBe("redis");
    expect(
      node(`const { createRedisSlotStore } = await import("sluice/redis");\n${create}`, "module"),
    ).toBe("redis");
  });

  it("imports every adapter subpath from `node -e`, whose global __filename and __dirname are no module's", () => {
    // `node -e` defines `__filename = "[eval]"` and `__dirname = "."` as globals, which an ES
    // module sees too: the adapters must find their packages and the Lua scripts from
    // `import.meta.url` (they threw ERR_INVALID_ARG_VALUE, or looked for ./lua).
    const answer = node(
      `Promise.all(["sluice/redis", "sluice/hono", "sluice/sqlite", "sluice/server"].map((name) => import(name)))
         .then(([redis]) => {
           const store = redis.createRedisSlotStore({ url: "redis://127.0.0.1:1" });
           console.log(store.kind);
           process.exit(0);
         });`,
      "commonjs",
    );
    expect(answer).toBe("redis");
  });

  it("tells an app that bundled the Redis store where its Lua scripts must go, and works once they are there", () => {
    const dir = join(root, "node_modules", ".cache", `sluice-bundle-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(
        join(dir, "app.mjs"),
        `import { createRedisSlotStore } from "sluice/redis";
         console.log(createRedisSlotStore({ url: "redis://127.0.0.1:1" }).kind);
         process.exit(0);`,
      );
      buildSync({
        entryPoints: [join(dir, "app.mjs")],
        outfile: join(dir, "out", "app.mjs"),
        bundle: true,
        platform: "node",
        format: "esm",
        // The drivers stay packages, as they would in most deployed bundles.
        external: ["ioredis"],
        absWorkingDir: root,
        logLevel: "silent",
      });
      const run = () =>
        execFileSync(process.execPath, [join(dir, "out", "app.mjs")], {
          cwd: root,
          encoding: "utf8",
          stdio: "pipe",
        }).trim();
      expect(run).toThrow(
        /copy node_modules\/sluice\/dist\/lua to a lua\/ directory next to the bundle/,
      );
      cpSync(join(dist, "lua"), join(dir, "out", "lua"), { recursive: true });
      expect(run()).toBe("redis");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps servers and drivers out of the core's import graph", () => {
    const core = staticDependencies("index.js");
    const drivers = ["hono", "@hono/node-server", "ioredis", "better-sqlite3", "undici", "pg"];
    for (const driver of [...drivers, "prom-client"]) {
      expect(core.has(driver)).toBe(false);
    }
    // Only built-ins the core uses (`node:` kept), no file-path helpers of a build shim.
    expect([...core].filter((name) => !name.startsWith("node:") && !/^[@a-z]/.test(name))).toEqual(
      [],
    );
    expect(core.has("path") || core.has("url") || core.has("node:url")).toBe(false);
    // The scan does see bare imports: the core's own dependencies and the adapters' drivers.
    expect(core.has("valibot")).toBe(true);
    expect(staticDependencies("hono.js").has("hono")).toBe(true);
    // The drivers are loaded on first use, so an adapter's entry imports without them.
    expect(staticDependencies("redis.js").has("ioredis")).toBe(false);
    expect(staticDependencies("sqlite.js").has("better-sqlite3")).toBe(false);
  });

  it("serves database pools and the PostgreSQL catalog from sluice/postgres, and loads pg only there", () => {
    const answer = node(
      `import { createRequire } from "node:module";
       const esm = await import("sluice/postgres");
       const cjs = createRequire(import.meta.url)("sluice/postgres");
       console.log(JSON.stringify([typeof esm.PostgresPools, typeof esm.lazyPostgresPools, typeof cjs.PostgresPools,
         typeof esm.openPostgresCatalog, typeof cjs.openPostgresCatalog, typeof esm.PostgresCatalogStore]));`,
      "module",
    );
    // The pools and, as docs/postgres.md imports it, the fleet's PostgreSQL catalog.
    expect(JSON.parse(answer)).toEqual(Array(6).fill("function"));
    expect(staticDependencies("postgres.js").has("pg")).toBe(true);
    for (const entry of ["index.js", "hono.js", "server.js"]) {
      expect(staticDependencies(entry).has("pg")).toBe(false);
    }
  });

  it("ships the Redis store's Lua scripts next to the bundles and types for every entry", () => {
    const lua = readdirSync(join(dist, "lua"));
    expect(lua).toEqual(expect.arrayContaining(["acquire.lua", "release.lua", "lib.lua"]));
    for (const entry of ["index", "testing", "hono", "sqlite", "redis", "server", "postgres"]) {
      expect(existsSync(join(dist, `${entry}.d.ts`))).toBe(true);
      expect(existsSync(join(dist, `${entry}.d.cts`))).toBe(true);
    }
  });

  it("ships source maps without copies of the sources, and the CLI only as the bin's ESM", () => {
    const maps = readdirSync(dist).filter((file) => file.endsWith(".map"));
    expect(maps.length).toBeGreaterThan(0);
    for (const file of maps) {
      const map = JSON.parse(readFileSync(join(dist, file), "utf8"));
      expect(map.sourcesContent, file).toBeUndefined();
    }
    // Positions still map to the sources.
    const core = JSON.parse(readFileSync(join(dist, "index.js.map"), "utf8"));
    expect(core.mappings.length).toBeGreaterThan(0);
    expect(readdirSync(dist).filter((file) => file.startsWith("cli."))).toEqual([
      "cli.js",
      "cli.js.map",
    ]);
  });

  it("ships every file its Markdown links to, and every anchor those links name", () => {
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
        cwd: root,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }),
    ) as { files: { path: string }[] }[];
    const shipped = new Set(packed[0]!.files.map((file) => file.path));
    const documents = [...shipped].filter((path) => path.endsWith(".md"));
    expect(documents).toEqual(expect.arrayContaining(["README.md", "docs/library.md"]));
    const broken = documents.flatMap((document) =>
      relativeLinks(readFileSync(join(root, document), "utf8"))
        .map((link) => ({ link, ...resolveLink(document, link) }))
        .filter(({ path, anchor }) => {
          if (!shipped.has(path)) return true;
          if (anchor === undefined || !path.endsWith(".md")) return false;
          return !headingAnchors(readFileSync(join(root, path), "utf8")).has(anchor);
        })
        .map(({ link }) => `${document}: ${link}`),
    );
    expect(broken).toEqual([]);
  });

  it("depends on every package its published types import, the core's on no optional one", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    const required = Object.keys(manifest.dependencies);
    // The drivers' and the server's packages (and the untyped drivers' types) are optional.
    const dependencies = new Set([...required, ...Object.keys(manifest.optionalDependencies)]);
    const typed = readdirSync(dist).filter((file) => /\.d\.c?ts$/.test(file));
    /** Packages the type files import, following their relative imports (shared chunks). */
    const importsOf = (files: readonly string[]) => {
      const imported = new Set<string>();
      const seen = new Set<string>();
      for (let pending = [...files], file = pending.pop(); file; file = pending.pop()) {
        if (seen.has(file)) continue;
        seen.add(file);
        const text = readFileSync(join(dist, file), "utf8");
        for (const match of text.matchAll(/^(?:import|export)\b[^;]*?from ['"]([^'"]+)['"]/gm)) {
          const specifier = match[1] as string;
          if (specifier.startsWith("./")) {
            pending.push(specifier.slice(2).replace(/\.(c?)js$/, ".d.$1ts"));
            continue;
          }
          if (specifier.startsWith("node:")) continue;
          const parts = specifier.split("/");
          imported.add(
            specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string),
          );
        }
      }
      return imported;
    };
    const imported = importsOf(typed);
    expect(imported.size).toBeGreaterThan(0);
    // A user installs dependencies only: the types of an untyped driver must be one too
    // (without @types/pg, a strict project importing sluice/postgres failed with TS7016).
    const untypedDrivers: Record<string, string> = {
      "better-sqlite3": "@types/better-sqlite3",
      pg: "@types/pg",
    };
    const missing = [...imported].filter((name) => {
      const types = untypedDrivers[name];
      return !dependencies.has(name) || (types !== undefined && !dependencies.has(types));
    });
    expect(missing).toEqual([]);
    // A core-only install (`--omit=optional`) still type-checks the core.
    const core = importsOf(["index.d.ts", "index.d.cts", "testing.d.ts", "testing.d.cts"]);
    expect([...core].filter((name) => !required.includes(name))).toEqual([]);
  });

  it("gives TypeScript the right types for every subpath, from ESM and from CommonJS", () => {
    // Inside the repository, so `sluice` resolves to this package through its exports map.
    const dir = join(root, "node_modules", ".cache", `sluice-types-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    const subpaths: Record<string, string> = {
      sluice: "createGovernor",
      "sluice/testing": "ManualClock",
      "sluice/hono": "createProxyApp",
      "sluice/sqlite": "SqliteAccessLogStore",
      "sluice/redis": "createRedisSlotStore",
      "sluice/server": "loadServerConfig",
    };
    const names = Object.entries(subpaths);
    // A driver's types must come with the package: with them missing, `Database` would be
    // `any` and the string below would type-check.
    const misuse = `// @ts-expect-error a string is no better-sqlite3 Database\nnew m3.SqliteAccessLogStore("not a database");\n`;
    writeFileSync(
      join(dir, "esm.mts"),
      `${names.map(([path, name], i) => `import { ${name} as n${i} } from "${path}";\nimport * as m${i} from "${path}";`).join("\n")}
export const used = [${names.map((_, i) => `n${i}`).join(", ")}];\n${misuse}`,
    );
    writeFileSync(
      join(dir, "cjs.cts"),
      `${names.map(([path], i) => `import m${i} = require("${path}");`).join("\n")}
export const used = [${names.map(([, name], i) => `m${i}.${name}`).join(", ")}];\n${misuse}`,
    );
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "node16",
          moduleResolution: "node16",
          target: "ES2022",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ["node"],
        },
        files: ["esm.mts", "cjs.cts"],
      }),
    );
    try {
      execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", dir], {
        encoding: "utf8",
      });
    } catch (error) {
      throw new Error(`tsc failed:\n${(error as { stdout?: string }).stdout ?? error}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** Markdown outside fenced code blocks. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "");
}

/** Link targets that are not absolute URLs: `path`, `path#anchor` or `#anchor`. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target));
}

/** The packed path and anchor a link in `document` points to. */
function resolveLink(document: string, link: string): { path: string; anchor?: string } {
  const [target, anchor] = link.split("#") as [string, string | undefined];
  const path =
    target === "" ? document : posix.normalize(posix.join(posix.dirname(document), target));
  return { path, anchor };
}

/** The anchors GitHub gives a document's headings (`## Run the server` → `run-the-server`). */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const match of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = (match[1] as string)
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}
