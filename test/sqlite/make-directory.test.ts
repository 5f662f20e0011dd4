import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeDirectory } from "../../adapters/sqlite/make-directory.js";

describe("makeDirectory", () => {
  it("creates every missing level with the mode, and leaves an existing one alone", () => {
    const root = mkdtempSync(join(tmpdir(), "sluice-mkdir-"));
    try {
      const nested = join(root, "a", "b", "c");
      makeDirectory(nested, 0o700);
      expect(statSync(nested).isDirectory()).toBe(true);
      expect(statSync(nested).mode & 0o777).toBe(0o700);
      makeDirectory(nested, 0o700);
      expect(existsSync(nested)).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it.runIf(existsSync("/proc/self"))("fails at once under /proc instead of spinning", () => {
    const startedAt = Date.now();
    expect(() => makeDirectory("/proc/sluice-no-such-dir/data")).toThrow(/ENOENT|EACCES|EPERM/);
    expect(Date.now() - startedAt).toBeLessThan(1_000);
  });
});
