import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CREATE_ACME } from "../cli/cli-process.js";

/**
 * The packed tarball installed the way users install it, into empty projects outside the
 * repository: once with `--omit=optional` (a library user who imports only the core), once in
 * full (someone who runs `npx sluice serve`). npm fetches the dependencies from the registry.
 * Like the other package tests, this uses `dist/` as built (`.ci/run` builds first; locally
 * run `npm run build`; a missing build skips loudly, and fails under CI).
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const built = existsSync(join(root, "dist", "index.js"));
if (!built) {
  const message = "dist/ is missing: run `npm run build` before the package tests.";
  if (process.env.CI === "true") throw new Error(message);
  console.warn(`\n!!! ${message} Skipping. !!!\n`);
}

const run = promisify(execFile);
const INSTALL_TIMEOUT_MS = 600_000;
/** What the server stack and the drivers are: none of them may reach a core-only install. */
const ADAPTER_PACKAGES = [
  "better-sqlite3",
  "ioredis",
  "pg",
  "hono",
  "@hono/node-server",
  "undici",
  "prom-client",
  "htmx.org",
  "uplot",
];

let work: string;
let tarball: string;

/**
 * better-sqlite3's install script downloads a prebuilt binary, else compiles SQLite (minutes
 * on a busy machine; these machines cannot reach the download). It looks in a local prebuild
 * directory first: given the binary this repository's own install built, of the same version,
 * the full install runs the script and takes it from there. Another version compiles.
 */
function localPrebuilds(): Record<string, string> {
  const driver = join(root, "node_modules", "better-sqlite3");
  const binary = join(driver, "build", "Release", "better_sqlite3.node");
  if (!existsSync(binary)) return {};
  const { version } = JSON.parse(readFileSync(join(driver, "package.json"), "utf8"));
  const dir = join(work, "prebuilds");
  execFileSync("mkdir", ["-p", dir]);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync("tar", ["-czf", join(dir, name), "-C", driver, "build/Release/better_sqlite3.node"]);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

/** `npm install` of the tarball into a new empty project; answers the project's directory. */
async function installInto(
  name: string,
  flags: readonly string[],
  env: Record<string, string> = {},
): Promise<string> {
  const project = join(work, name);
  execFileSync("mkdir", ["-p", project]);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: `sluice-${name}`, version: "1.0.0", private: true }),
  );
  await run("npm", ["install", "--no-audit", "--no-fund", ...flags, tarball], {
    cwd: project,
    timeout: INSTALL_TIMEOUT_MS,
    // `npm test --ignore-scripts` (as CI runs it) hands npm_config_ignore_scripts=true down to
    // every child: the user's install this simulates runs the drivers' install scripts.
    env: { ...process.env, npm_config_ignore_scripts: "false", ...env },
  });
  return project;
}

/** Every file under `dir` named `name` (a native build leaves `better_sqlite3.node`). */
function findFiles(dir: string, name: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findFiles(path, name));
    else if (entry.name === name) found.push(path);
  }
  return found;
}

/** Top-level packages in a project's node_modules (`@scope/name` for scoped ones). */
function installedPackages(project: string): string[] {
  const modules = join(project, "node_modules");
  return readdirSync(modules)
    .filter((name) => !name.startsWith("."))
    .flatMap((name) =>
      name.startsWith("@")
        ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`)
        : [name],
    )
    .sort();
}

/** Runs Node in the project (so `sluice` resolves to the installed package). */
async function node(project: string, args: readonly string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, args, { cwd: project });
    return { code: 0, stdout: stdout.trim(), stderr: stderr.trim() };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

describe.skipIf(!built)("the packed package, installed from its tarball", () => {
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "sluice-install-"));
    // dist/ is already built: the prepack build would only do it again.
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
        cwd: root,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }),
    ) as { filename: string }[];
    tarball = join(work, packed[0]!.filename);
  });

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("runs no script of its own when installed", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    const installScripts = ["preinstall", "install", "postinstall", "prepare"];
    expect(Object.keys(manifest.scripts).filter((name) => installScripts.includes(name))).toEqual(
      [],
    );
    // The build happens when the tarball is made.
    expect(manifest.scripts.prepack).toMatch(/^tsup\b/);
  });

  it(
    "installs without the server stack or any driver with --omit=optional, and the core runs",
    async () => {
      const project = await installInto("core", ["--omit=optional"]);
      expect(installedPackages(project)).toEqual(["lru-cache", "sluice", "valibot"]);
      // No native build happened anywhere in the tree.
      expect(findFiles(join(project, "node_modules"), "better_sqlite3.node")).toEqual([]);
      for (const name of ADAPTER_PACKAGES) {
        expect(existsSync(join(project, "node_modules", name)), name).toBe(false);
      }

      const esm = await node(project, [
        "--input-type=module",
        "-e",
        `import { createGovernor } from "sluice";
         const governor = createGovernor();
         await governor.definePool("p", { maxConcurrent: 1 });
         console.log(await governor.run("p", () => "ran"));
         await governor.close();`,
      ]);
      expect(esm).toMatchObject({ code: 0, stdout: "ran" });
      const cjs = await node(project, [
        "-e",
        `const { createGovernor, parseRateLimitHeaders } = require("sluice");
         console.log(typeof createGovernor, typeof parseRateLimitHeaders);`,
      ]);
      expect(cjs).toMatchObject({ code: 0, stdout: "function function" });

      // An adapter's entry still loads; using it names the package to install.
      const sqlite = await node(project, [
        "--input-type=module",
        "-e",
        `const { openSluiceDatabase } = await import("sluice/sqlite");
         try { openSluiceDatabase(":memory:"); } catch (error) { console.log(error.code, error.message); }`,
      ]);
      expect(sqlite.stdout).toMatch(
        /^missing_dependency .*needs the package better-sqlite3, which is not installed: run `npm install better-sqlite3`\.$/,
      );
      const redis = await node(project, [
        "-e",
        `const { createRedisSlotStore } = require("sluice/redis");
         try { createRedisSlotStore({ url: "redis://127.0.0.1:1" }); } catch (error) { console.log(error.message); }`,
      ]);
      expect(redis.stdout).toMatch(/needs the package ioredis, .*`npm install ioredis`/);

      // The CLI: help works; commands say what to install instead of a stack trace.
      const cli = join(project, "node_modules", "sluice", "dist", "cli.js");
      expect((await node(project, [cli, "--help"])).code).toBe(0);
      const team = await node(project, [cli, ...CREATE_ACME, "--data-dir", join(project, "data")]);
      expect(team.code).toBe(1);
      expect(team.stderr).toMatch(
        /needs the package better-sqlite3, .*`npm install better-sqlite3`/,
      );
      const serve = await node(project, [
        cli,
        "serve",
        "--port",
        "0",
        "--data-dir",
        join(project, "data"),
      ]);
      expect(serve.code).toBe(1);
      expect(serve.stderr).toMatch(
        /^Error: sluice serve needs the package (\S+), which is not installed: run `npm install \1`\.$/m,
      );
      expect(serve.stderr).not.toMatch(/\n\s+at /);
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    "runs `sluice serve` from a full install",
    async () => {
      const project = await installInto("full", [], localPrebuilds());
      for (const name of ["better-sqlite3", "hono", "@hono/node-server", "prom-client"]) {
        expect(existsSync(join(project, "node_modules", name)), name).toBe(true);
      }
      const child = spawn(
        join(project, "node_modules", ".bin", "sluice"),
        ["serve", "--port", "0", "--data-dir", join(project, "data"), "--log-format", "json"],
        { cwd: project, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const exited = new Promise<number | null>((done) => child.once("close", done));
      try {
        await expect
          .poll(() => /"msg":"Listening on 127\.0\.0\.1:(\d+)"/.exec(stdout)?.[1], {
            timeout: 60_000,
            interval: 100,
          })
          .toBeDefined()
          .catch((error: Error) => {
            // Say what the server printed: a start that never listens is otherwise a bare timeout.
            throw new Error(`${error.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
          });
        const port = /"msg":"Listening on 127\.0\.0\.1:(\d+)"/.exec(stdout)?.[1];
        const base = `http://127.0.0.1:${port}`;
        expect((await fetch(`${base}/healthz`)).status).toBe(200);
        expect(await (await fetch(`${base}/readyz`)).json()).toMatchObject({ status: "ready" });
        expect(await (await fetch(`${base}/metrics`)).text()).toContain(
          "process_cpu_user_seconds_total",
        );
        expect((await fetch(`${base}/api/v1/me`)).status).toBe(401);
      } finally {
        child.kill("SIGTERM");
      }
      expect(await exited, stderr).toBe(0);
      expect(stdout).toContain('"msg":"Stopped."');
    },
    INSTALL_TIMEOUT_MS,
  );
});
