import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * This package's version, read from its package.json: found by walking up from this module
 * (`adapters/cli/` in the source tree, `dist/` in a build or an installed package).
 * `import.meta.url` first: an ES module can still see a global `__dirname` (`node -e` sets one
 * to "."); a CommonJS build without it (esbuild's) falls back to `__dirname`.
 *
 * @example
 * ```ts
 * packageVersion(); // "0.1.0"
 * ```
 */
export function packageVersion(): string {
  let directory =
    typeof import.meta.url === "string" ? dirname(fileURLToPath(import.meta.url)) : __dirname;
  for (let level = 0; level < 5; level++) {
    const file = join(directory, "package.json");
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, "utf8")) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === "sluice" && manifest.version) return manifest.version;
    }
    directory = dirname(directory);
  }
  return "unknown";
}
