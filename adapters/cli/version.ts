import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * This package's version, read from its package.json: found by walking up from this module
 * (`adapters/cli/` in the source tree, `dist/` in a build or an installed package).
 * CommonJS builds have no `import.meta.url`, ESM has no `__dirname`.
 *
 * @example
 * ```ts
 * packageVersion(); // "0.1.0"
 * ```
 */
export function packageVersion(): string {
  let directory =
    typeof __dirname === "string" ? __dirname : dirname(fileURLToPath(import.meta.url));
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
