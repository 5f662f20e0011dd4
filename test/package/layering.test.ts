import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The layering a newcomer relies on to find their way: the core (`src/`) never imports an
 * adapter, and the HTTP adapter (`adapters/hono`) never imports the server or the CLI that
 * wire it (the server composes the apps, not the other way round).
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => /\.tsx?$/.test(file))
    .map((file) => join(dir, file));
}

/** `file`'s relative imports (static and dynamic), as paths from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const specifiers = [
    ...text.matchAll(/\bfrom\s+["'](\.[^"']+)["']/g),
    ...text.matchAll(/\bimport\(\s*["'](\.[^"']+)["']\s*\)/g),
  ].map((match) => match[1] as string);
  return specifiers.map((specifier) => relative(root, resolve(root, dirname(file), specifier)));
}

function crossings(dir: string, forbidden: readonly string[]): string[] {
  return sourceFiles(dir).flatMap((file) =>
    importsOf(file)
      .filter((target) => forbidden.some((prefix) => target.startsWith(prefix)))
      .map((target) => `${file} imports ${target}`),
  );
}

describe("layering of the source tree", () => {
  it("the core never imports an adapter", () => {
    expect(crossings("src", ["adapters/"])).toEqual([]);
  });

  it("adapters/hono never imports the server or the CLI", () => {
    expect(crossings("adapters/hono", ["adapters/server/", "adapters/cli/"])).toEqual([]);
  });
});
