import { cpSync } from "node:fs";
import { defineConfig } from "tsup";

/**
 * One build for the library, its optional adapters and the CLI. Every entry below is a
 * public subpath of the package's `exports` map, so importing the core never loads a
 * server or a driver.
 */
export default defineConfig({
  entry: {
    index: "src/index.ts",
    testing: "src/testing.ts",
    hono: "adapters/hono/index.ts",
    sqlite: "adapters/sqlite/index.ts",
    redis: "adapters/redis/index.ts",
    server: "adapters/server/index.ts",
    cli: "adapters/cli/main.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  splitting: true,
  treeshake: true,
  // Node >= 20 knows `node:` imports; keep them, so a reader of dist/ sees what is built in.
  removeNodeProtocol: false,
  // No shims: they would put a `__dirname` helper in a chunk every entry (the core too) loads.
  // The Redis store finds its Lua files with `__dirname` in CommonJS and `import.meta.url` in
  // ESM (see adapters/redis/scripts.ts).
  shims: false,
  async onSuccess() {
    // Lua scripts are read at run time next to the bundle (dist/lua/*.lua).
    cpSync("adapters/redis/lua", "dist/lua", { recursive: true });
  },
});
