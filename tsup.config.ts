import { cpSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "tsup";

/**
 * The library's entries: each is a public subpath of the package's `exports` map, so
 * importing the core never loads a server or a driver.
 */
const LIBRARY_ENTRIES = {
  index: "src/index.ts",
  testing: "src/testing.ts",
  hono: "adapters/hono/index.ts",
  sqlite: "adapters/sqlite/index.ts",
  redis: "adapters/redis/index.ts",
  server: "adapters/server/index.ts",
  postgres: "adapters/postgres-pool/index.ts",
};

/**
 * tsup leaves `dependencies` and `peerDependencies` as imports but would bundle the optional
 * ones (the drivers and the server's HTTP stack): they stay imports too, resolved where the
 * user installed them, or reported missing by name.
 */
const OPTIONAL_DEPENDENCIES = Object.keys(
  JSON.parse(readFileSync("package.json", "utf8")).optionalDependencies ?? {},
);

/** One build for the library, its optional adapters and the CLI (`bin`: dist/cli.js). */
export default defineConfig({
  entry: { ...LIBRARY_ENTRIES, cli: "adapters/cli/main.ts" },
  format: ["esm", "cjs"],
  // The CLI is run, never imported: no types for it.
  dts: { entry: LIBRARY_ENTRIES },
  sourcemap: true,
  clean: true,
  target: "node20",
  splitting: true,
  treeshake: true,
  external: OPTIONAL_DEPENDENCIES,
  // Node >= 20 knows `node:` imports; keep them, so a reader of dist/ sees what is built in.
  removeNodeProtocol: false,
  // No shims: they would put a `__dirname` helper in a chunk every entry (the core too) loads.
  // The Redis store finds its Lua files with `__dirname` in CommonJS and `import.meta.url` in
  // ESM (see adapters/redis/scripts.ts).
  shims: false,
  // Maps keep positions (stack traces under --enable-source-maps name the source lines), not
  // a second copy of every source file: that alone was two thirds of the package.
  esbuildOptions(options) {
    options.sourcesContent = false;
  },
  async onSuccess() {
    // Lua scripts are read at run time next to the bundle (dist/lua/*.lua).
    cpSync("adapters/redis/lua", "dist/lua", { recursive: true });
    // Nor has it any use for a CommonJS build, made with the other entries' (one format list).
    for (const file of ["cli.cjs", "cli.cjs.map"]) {
      rmSync(join("dist", file), { force: true });
    }
  },
});
