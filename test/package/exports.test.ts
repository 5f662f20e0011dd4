import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
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
         core: ["createGovernor", "MemorySlotStore", "verifySignature", "MemoryAccessLogStore", "RejectedError", "parseRateLimitHeaders"].filter((name) => typeof core[name] === "function"),
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

  it("keeps servers and drivers out of the core's import graph", () => {
    const core = staticDependencies("index.js");
    for (const driver of ["hono", "@hono/node-server", "ioredis", "better-sqlite3"]) {
      expect(core.has(driver)).toBe(false);
    }
    // The scan does see bare imports: the core's own dependencies and the adapters' drivers.
    expect(core.has("valibot")).toBe(true);
    expect(staticDependencies("redis.js").has("ioredis")).toBe(true);
  });

  it("ships the Redis store's Lua scripts next to the bundles and types for every entry", () => {
    const lua = readdirSync(join(dist, "lua"));
    expect(lua).toEqual(expect.arrayContaining(["acquire.lua", "release.lua", "lib.lua"]));
    for (const entry of ["index", "testing", "hono", "sqlite", "redis", "server"]) {
      expect(existsSync(join(dist, `${entry}.d.ts`))).toBe(true);
      expect(existsSync(join(dist, `${entry}.d.cts`))).toBe(true);
    }
  });
});
