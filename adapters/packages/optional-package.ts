import { createRequire } from "node:module";
import { MissingDependencyError } from "../../src/errors.js";

// Packages resolve from where Sluice is installed, not from the caller's working directory.
// A bare `require` would become the bundler's shim, which refuses dynamic names.
// `import.meta.url` first: an ES module can still see a global `__filename` (`node -e` sets
// one to "[eval]"); a CommonJS build without it (esbuild's) falls back to `__filename`.
const requireHere: NodeJS.Require = createRequire(
  typeof import.meta.url === "string" ? import.meta.url : __filename,
);

const loaded = new Map<string, unknown>();

/**
 * Loads one of the package's optional dependencies (a driver or the server's HTTP stack) on
 * first use, so importing an adapter costs nothing until it is used and a core-only install
 * (`npm install --omit=optional`) still imports it. Throws {@link MissingDependencyError}
 * naming the package when it is not installed; any other failure (a native build that does
 * not load, a package of its own missing) is rethrown as is.
 *
 * @example
 * ```ts
 * const Database = optionalPackage<typeof import("better-sqlite3")>("better-sqlite3", "The SQLite catalog");
 * ```
 */
export function optionalPackage<T>(name: string, neededBy: string): T {
  if (loaded.has(name)) return loaded.get(name) as T;
  let module: T;
  try {
    module = requireHere(name) as T;
  } catch (error) {
    throw missingPackageError(error, neededBy) ?? error;
  }
  loaded.set(name, module);
  return module;
}

/**
 * A {@link MissingDependencyError} for an error that says a package could not be found
 * (`require` or `import()`, CommonJS or ESM wording); null for any other error.
 *
 * @example
 * ```ts
 * await import("./server.js").catch((error) => { throw missingPackageError(error, "sluice serve") ?? error; });
 * ```
 */
export function missingPackageError(
  error: unknown,
  neededBy: string,
): MissingDependencyError | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") return null;
  // "Cannot find module 'x'" (require) or "Cannot find package 'x' imported from …" (import).
  const match = /Cannot find (?:module|package) '([^']+)'/.exec((error as Error).message);
  const specifier = match?.[1];
  // A relative path or a file is a broken installation of Sluice itself, not a missing package.
  if (!specifier || /^[./]/.test(specifier)) return null;
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
  return new MissingDependencyError(name, neededBy, { cause: error });
}
