/**
 * Runs the MCP conformance suite's server scenarios (`@modelcontextprotocol/conformance`)
 * against Sluice's `/mcp`: `npm run conformance:mcp` (opt-in, not in CI; see docs/mcp.md).
 *
 * The suite needs Node ≥ 22 and connects without credentials, so this script:
 * 1. installs Node 22 and the suite from the npm registry into a directory of its own
 *    (`SLUICE_CONFORMANCE_DIR`, default `$TMPDIR/sluice-mcp-conformance`), never into the
 *    project's node_modules;
 * 2. starts the server as `sluice serve` composes it, on a seeded data directory, and signs an
 *    assistant in through the real OAuth flow (registration, consent, code, token);
 * 3. puts a small forwarder in front of it that adds that token to each request and passes
 *    Host and Origin through (mapped to the server's port), so the DNS rebinding scenario
 *    still reaches the server with the host it sent;
 * 4. runs `conformance server --url <forwarder>/mcp --expected-failures conformance-baseline.yml`
 *    (the scenarios that test capabilities or fixture tools Sluice does not have), with the
 *    extra arguments given, e.g. `npm run conformance:mcp -- --scenario tools-list`.
 *
 * @example
 * ```sh
 * npm run conformance:mcp -- --suite all
 * ```
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { signInClient, startWithRegisteredClient } from "./harness.js";

const SUITE_VERSION = "0.1.16";
const NODE_MAJOR = "22";

/** Node 22 and the suite in a directory of their own; returns the node binary and the CLI. */
function installSuite(dir: string): { node: string; cli: string } {
  const node = join(dir, "node_modules", ".bin", "node");
  const cli = join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
  if (!existsSync(node) || !existsSync(cli)) {
    // A half-made install (scripts skipped, an interrupted download) is started over: npm would
    // not run the `node` package's install script again for a package already there.
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "package.json"),
      '{ "name": "sluice-mcp-conformance", "private": true }',
    );
    execFileSync(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        `node@${NODE_MAJOR}`,
        `@modelcontextprotocol/conformance@${SUITE_VERSION}`,
      ],
      // The `node` package fetches its binary in an install script: `npm run … --ignore-scripts`
      // (as CI calls this) passes npm_config_ignore_scripts down, which would skip it.
      { cwd: dir, stdio: "inherit", env: { ...process.env, npm_config_ignore_scripts: "false" } },
    );
    if (!existsSync(node)) {
      throw new Error(`npm installed node@${NODE_MAJOR} without its binary (${node})`);
    }
  }
  return { node, cli };
}

/** Forwards every request to `target`, adding the bearer token; Host and Origin keep their host name. */
async function startForwarder(target: URL, accessToken: string) {
  const forwarder = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const ownPort = String((forwarder.address() as AddressInfo).port);
    const headers = { ...incoming.headers, authorization: `Bearer ${accessToken}` };
    const retarget = (value: string | undefined) =>
      value?.replace(`:${ownPort}`, `:${target.port}`);
    headers.host = retarget(incoming.headers.host);
    if (incoming.headers.origin) headers.origin = retarget(incoming.headers.origin);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on("error", () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => forwarder.listen(0, "127.0.0.1", resolve));
  return forwarder;
}

const { node, cli } = installSuite(
  process.env.SLUICE_CONFORMANCE_DIR ?? join(tmpdir(), "sluice-mcp-conformance"),
);
const redirectUri = "http://127.0.0.1:40199/cb";
const { env, as, client, cookie } = await startWithRegisteredClient(redirectUri);
const { tokens } = await signInClient({ as, client, redirectUri, cookie });
const forwarder = await startForwarder(new URL(env.baseUrl), tokens.access_token);
const url = `http://localhost:${(forwarder.address() as AddressInfo).port}/mcp`;
console.log(`Sluice at ${env.baseUrl}, conformance suite against ${url}`);
const baseline = fileURLToPath(new URL("conformance-baseline.yml", import.meta.url));
const args = [cli, "server", "--url", url, "--expected-failures", baseline];
// The suite writes its results under the working directory: the install directory, not the project.
const run = spawn(node, [...args, ...process.argv.slice(2)], {
  stdio: "inherit",
  cwd: dirname(node),
});
const code = await new Promise<number>((resolve) =>
  run.on("exit", (status) => resolve(status ?? 1)),
);
forwarder.close();
await env.close();
process.exit(code);
