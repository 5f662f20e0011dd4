import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../adapters/cli/run-cli.js";
import { type OpenDataDir, openDataDir } from "../../adapters/server/data-dir.js";
import { captureIo } from "./capture-io.js";
import { CREATE_ACME, tempDir } from "./cli-process.js";

let dir: string;
let cleanup: () => void;

async function sluice(args: readonly string[], env: Record<string, string> = {}) {
  const captured = captureIo({ SLUICE_DATA_DIR: dir, ...env });
  const code = await runCli(args, captured.io);
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}

function writeFile(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return path;
}

async function readCatalog<T>(read: (data: OpenDataDir) => T | Promise<T>): Promise<T> {
  const data = await openDataDir({ dataDir: dir });
  try {
    return await read(data);
  } finally {
    data.close();
  }
}

const chat = {
  name: "Chat",
  subdomain: "chat",
  origin: "http://127.0.0.1:9000/",
  maxConcurrent: 4,
};

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("sluice-apply-"));
  await sluice(CREATE_ACME);
});

afterEach(async () => cleanup());

describe("sluice apply", () => {
  it("reads a file saved with a UTF-8 byte order mark", async () => {
    const file = writeFile("bom.json", `\uFEFF${JSON.stringify({ team: "acme", pools: [chat] })}`);
    const result = await sluice(["apply", file]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(
      await readCatalog(async (data) =>
        (await data.catalog.store.listAllPools()).map((p) => p.subdomain),
      ),
    ).toEqual(["chat"]);
  });

  it("--dry-run shows the plan and writes nothing", async () => {
    const file = writeFile("a.json", {
      team: "acme",
      budgets: [{ name: "llm", originMaxConcurrent: 4, pools: [chat] }],
    });
    const result = await sluice(["apply", file, "--dry-run"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        `Dry run of ${file} for team acme (nothing is changed):`,
        "Would create budget llm",
        "Would create pool chat",
        "Dry run: 2 to create, 0 to update, 0 to delete, 0 unchanged. Nothing was written.",
        "",
      ].join("\n"),
    );
    expect(await readCatalog(async (data) => data.catalog.store.listAllPools())).toEqual([]);
  });

  it("creates with defaults, then is idempotent", async () => {
    const file = writeFile("a.json", {
      team: "acme",
      budgets: [
        { name: "llm", originMaxConcurrent: 4, pools: [{ ...chat, reservedConcurrent: 2 }] },
      ],
    });
    expect((await sluice(["apply", file])).stdout).toContain(
      "Done: 2 create, 0 update, 0 delete, 0 unchanged.",
    );
    const [pool] = await readCatalog(async (data) => data.catalog.store.listAllPools());
    expect(pool).toMatchObject({
      subdomain: "chat",
      origin: "http://127.0.0.1:9000",
      maxConcurrent: 4,
      queueSize: 0,
      queueTimeoutMs: 30_000,
      rpm: null,
      requireKey: true,
      reservedConcurrent: 2,
      budgetId: 1,
      metricsRetentionDays: 30,
    });
    // A running server watches the change marker from its own connection.
    const watcher = await openDataDir({ dataDir: dir });
    const marker = await watcher.catalog.store.changeMarker();
    const again = await sluice(["apply", file]);
    expect(again.stdout).toContain(
      "Unchanged budget llm\nUnchanged pool chat\nDone: 0 create, 0 update, 0 delete, 2 unchanged.",
    );
    const markerAfter = await watcher.catalog.store.changeMarker();
    watcher.close();
    expect(markerAfter).toBe(marker);
  });

  it("lists each changed field of an update", async () => {
    await sluice(["apply", writeFile("a.json", { team: "acme", pools: [chat] })]);
    const file = writeFile("b.json", {
      team: "acme",
      pools: [{ ...chat, maxConcurrent: 2, rpm: 60, queue: { size: 5 } }],
    });
    const result = await sluice(["apply", file]);
    expect(result.stdout).toContain(
      "Updated pool chat: maxConcurrent 4 → 2, queueSize 0 → 5, rpm null → 60\n",
    );
    expect(
      await readCatalog(async (data) => data.catalog.store.getPoolBySubdomain(1, "chat")),
    ).toMatchObject({
      maxConcurrent: 2,
      rpm: 60,
      queueSize: 5,
    });
  });

  it("stores caller policies, reports their change, and re-applies as unchanged", async () => {
    const callerPolicies = { ipAllowlist: ["10.0.0.0/8"], hmac: { skewSeconds: 120 } };
    const file = writeFile("p.json", { team: "acme", pools: [{ ...chat, callerPolicies }] });
    await sluice(["apply", file]);
    expect(
      (await readCatalog((data) => data.catalog.store.getPoolBySubdomain(1, "chat")))
        ?.callerPolicies,
    ).toEqual(callerPolicies);
    expect((await sluice(["apply", file])).stdout).toContain("Unchanged");
    const wider = { ...callerPolicies, ipAllowlist: ["10.0.0.0/8", "2001:db8::/32"] };
    const result = await sluice([
      "apply",
      writeFile("q.json", { team: "acme", pools: [{ ...chat, callerPolicies: wider }] }),
    ]);
    expect(result.stdout).toContain("callerPolicies");
    const bad = await sluice([
      "apply",
      writeFile("r.json", {
        team: "acme",
        pools: [{ ...chat, callerPolicies: { accessProxy: { preset: "trusted-header" } } }],
      }),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("callerPolicies.accessProxy.trustedProxies");
  });

  it("names caller policy problems in plain words: a missing or misspelt field, a key no token could match", async () => {
    const jwt = {
      algorithms: ["RS256"],
      issuer: "https://idp.example",
      audience: "sluice",
      publicKey: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
    };
    const callerPolicies = {
      hmac: { skewSeconds: 0, secret: "not-here" },
      accessProxy: { preset: "trusted-header" },
      jwt,
      ipAllowlist: "10.0.0.0/8",
    };
    const result = await sluice([
      "apply",
      writeFile("policies.json", { team: "acme", pools: [{ ...chat, callerPolicies }] }),
    ]);
    expect(result.code).toBe(2);
    const at = "pools.0.callerPolicies";
    expect(result.stderr).toContain(`${at}.hmac.skewSeconds: At least 1 (a second).`);
    expect(result.stderr).toContain(`${at}.hmac.secret: Unknown field (check the spelling).`);
    expect(result.stderr).toContain(
      `${at}.accessProxy.trustedProxies: A trusted-header policy needs the proxy's addresses: list them in trustedProxies.`,
    );
    expect(result.stderr).toContain(
      `${at}.jwt.publicKey: This PEM holds no public key Node can read: check that it was pasted whole.`,
    );
    expect(result.stderr).toContain(
      `${at}.ipAllowlist: List the CIDRs in a JSON array, such as ["10.0.0.0/8"].`,
    );
    expect(result.stderr).not.toMatch(/Invalid (key|type|value)/);
    expect(
      await readCatalog((data) => data.catalog.store.getPoolBySubdomain(1, "chat")),
    ).toBeUndefined();
  });

  it("prints a JWKS URL's change without its query, as the pages show it", async () => {
    const jwt = (jwksUrl: string) => ({
      algorithms: ["RS256"],
      issuer: "https://idp.example",
      audience: "sluice",
      jwksUrl,
    });
    const applied = (name: string, jwksUrl: string) =>
      sluice([
        "apply",
        writeFile(name, {
          team: "acme",
          pools: [{ ...chat, callerPolicies: { jwt: jwt(jwksUrl) } }],
        }),
      ]);
    expect((await applied("a.json", "https://idp.example/jwks?token=q-secret-1")).code).toBe(0);
    const query = await applied("b.json", "https://idp.example/jwks?token=q-secret-2");
    expect(query.stdout).toContain('"jwksUrl":"https://idp.example/jwks?…"');
    expect(query.stdout).toContain("(the JWKS URL's query changed)");
    const moved = await applied("c.json", "https://keys.example/jwks?token=q-secret-3");
    expect(moved.stdout).toContain(
      '"jwksUrl":"https://idp.example/jwks?…"}} → {"jwt":{"header":"authorization","algorithms":["RS256"],"issuer":"https://idp.example","audience":"sluice","clockToleranceSeconds":30,"jwksUrl":"https://keys.example/jwks?…"}}',
    );
    for (const result of [query, moved]) expect(result.stdout).not.toContain("q-secret");
    // `status --json` shows the policies the same way.
    const status = await sluice(["status", "--json"]);
    expect(status.stdout).toContain('"jwksUrl":"https://keys.example/jwks?…"');
    expect(status.stdout).not.toContain("q-secret");
    expect(
      (await applied("c.json", "https://keys.example/jwks?token=q-secret-3")).stdout,
    ).toContain("Unchanged pool chat");
  });

  it("refuses a claim requirement given twice or named __proto__ (JSON would drop one unseen), storing nothing", async () => {
    const jwt = (claims: string) =>
      `{"algorithms":["ES256"],"issuer":"https://idp.example","audience":"sluice","jwksUrl":"https://idp.example/jwks","requiredClaims":${claims}}`;
    const pool = (claims: string) =>
      `{"team":"acme","pools":[{"name":"Chat","subdomain":"chat","origin":"http://127.0.0.1:9000/","maxConcurrent":4,"callerPolicies":{"jwt":${jwt(claims)}}}]}`;
    const applied = (claims: string) => sluice(["apply", writeFile("claims.json", pool(claims))]);
    const refusals = {
      '{"sub":["svc-a"],"admin":[true],"sub":["svc-b"]}':
        "pools.0.callerPolicies.jwt.requiredClaims.sub: given twice (only the last would count): give it once.",
      '{"__proto__":["svc-a"],"sub":["svc-b"]}':
        "pools.0.callerPolicies.jwt.requiredClaims: __proto__ cannot be a claim name here",
    };
    for (const [claims, message] of Object.entries(refusals)) {
      const result = await applied(claims);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(message);
    }
    expect(
      await readCatalog((data) => data.catalog.store.getPoolBySubdomain(1, "chat")),
    ).toBeUndefined();
    expect((await applied('{"sub":["svc-a"]}')).code).toBe(0);
  });

  it("reads credential values from the environment and stores them encrypted", async () => {
    const file = writeFile("a.json", {
      team: "acme",
      pools: [{ ...chat, credential: { header: "Authorization", valueFromEnv: "CHAT_AUTH" } }],
    });
    const result = await sluice(["apply", file], { CHAT_AUTH: "Bearer sk-test-123" });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("sk-test-123");
    const { stored, decrypted } = await readCatalog(async (data) => {
      const pool = (await data.catalog.store.getPoolBySubdomain(1, "chat"))!;
      return {
        stored: JSON.stringify(pool.credential),
        decrypted: data.catalog.decryptCredential(pool),
      };
    });
    expect(stored).not.toContain("sk-test-123");
    expect(decrypted).toEqual({ header: "authorization", value: "Bearer sk-test-123" });

    expect((await sluice(["apply", file], { CHAT_AUTH: "Bearer sk-test-123" })).stdout).toContain(
      "Unchanged pool chat",
    );
    const rotated = await sluice(["apply", file], { CHAT_AUTH: "Bearer sk-test-456" });
    expect(rotated.stdout).toContain("Updated pool chat: credential changed (authorization)\n");
    expect(rotated.stdout).not.toContain("sk-test-456");
  });

  it("fails before writing anything when a credential variable is not set", async () => {
    const file = writeFile("a.json", {
      team: "acme",
      pools: [
        { ...chat, subdomain: "first" },
        {
          ...chat,
          subdomain: "second",
          credential: { header: "x-api-key", valueFromEnv: "MISSING_KEY" },
        },
      ],
    });
    const result = await sluice(["apply", file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'Error: Pool "second": the environment variable MISSING_KEY (its credential value) is not set.\n',
    );
    expect(await readCatalog(async (data) => data.catalog.store.listAllPools())).toEqual([]);
  });

  it("refuses a credential that would corrupt the origin request, never echoing its value", async () => {
    const file = writeFile("framing.json", {
      team: "acme",
      pools: [
        { ...chat, subdomain: "one", credential: { header: "Content-Length", value: "0" } },
        { ...chat, subdomain: "two", credential: { header: "x-svc-key", value: "v" } },
        {
          ...chat,
          subdomain: "three",
          credential: { header: "x-api-key", value: "sk-1\r\nHost: evil" },
        },
        { ...chat, subdomain: "four", credential: { header: "x api key", value: "v" } },
      ],
    });
    const result = await sluice(["apply", file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "pools.0.credential.header: Cannot be content-length: Sluice sets or removes that header itself.",
    );
    expect(result.stderr).toContain("pools.1.credential.header: Cannot be x-svc-key");
    expect(result.stderr).toContain("pools.2.credential.value: Must be printable ASCII");
    expect(result.stderr).toContain("pools.3.credential.header: Must be a header name");
    expect(result.stderr).not.toContain("sk-1");

    const fromEnv = writeFile("env.json", {
      team: "acme",
      pools: [{ ...chat, credential: { header: "x-api-key", valueFromEnv: "CHAT_KEY" } }],
    });
    const injected = await sluice(["apply", fromEnv], { CHAT_KEY: "sk-2\nX-Admin: 1" });
    expect(injected.code).toBe(2);
    expect(injected.stderr).toContain(
      'Pool "chat": the environment variable CHAT_KEY (its credential value) cannot be sent as a header value. Must be printable ASCII',
    );
    expect(injected.stderr).not.toContain("sk-2");
    expect(await readCatalog(async (data) => data.catalog.store.listAllPools())).toEqual([]);
  });

  it("reports every schema problem with its path, exit 2", async () => {
    const file = writeFile("bad.json", {
      team: "acme",
      pools: [
        { ...chat, maxConcurrent: 0, subdomain: "Not_A_Label", extra: true },
        { ...chat },
        { ...chat },
      ],
    });
    const result = await sluice(["apply", file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file} is not a valid Sluice config:`);
    expect(result.stderr).toContain(
      "pools.0.subdomain: Use 1-63 lower-case letters, digits and inner hyphens.",
    );
    expect(result.stderr).toContain("pools.0.maxConcurrent:");
    expect(result.stderr).toContain("pools.0.extra: Unknown field (check the spelling).");
  });

  it("refuses an origin with a password, a query or a fragment (the proxy would drop them), never echoing it", async () => {
    const file = writeFile("origin.json", {
      team: "acme",
      pools: [
        { ...chat, origin: "http://user:s3cret@127.0.0.1:9000/v1" },
        { ...chat, subdomain: "q", origin: "http://127.0.0.1:9000/v1?x=1" },
        { ...chat, subdomain: "f", origin: "http://127.0.0.1:9000/v1#top" },
      ],
    });
    const result = await sluice(["apply", file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'pools.0.origin: Must not hold a user name or password: put the upstream\'s auth in "credential".',
    );
    expect(result.stderr).toContain("pools.1.origin: Must not hold a ?query or #fragment");
    expect(result.stderr).toContain("pools.2.origin: Must not hold a ?query or #fragment");
    expect(result.stderr).not.toContain("s3cret");
    expect(await readCatalog(async (data) => data.catalog.store.listAllPools())).toEqual([]);
  });

  it("refuses TRACE and CONNECT as read methods: the proxy never forwards them", async () => {
    const file = writeFile("trace.json", {
      team: "acme",
      pools: [{ ...chat, readMethods: ["post", "trace", "QUERY"] }],
    });
    const result = await sluice(["apply", file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "pools.0.readMethods.1: TRACE and CONNECT are never proxied, so they cannot be read methods.",
    );
  });

  it("refuses limits the governor cannot hold before writing anything", async () => {
    const file = writeFile("huge.json", {
      team: "acme",
      pools: [{ ...chat, rpm: 1_000_001, termMs: 1e15, queue: { size: 1, timeoutMs: 1e300 } }],
    });
    const result = await sluice(["apply", file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("pools.0.rpm:");
    expect(result.stderr).toContain("pools.0.termMs:");
    expect(result.stderr).toContain("pools.0.queue.timeoutMs:");
    expect(await readCatalog(async (data) => data.catalog.store.listAllPools())).toEqual([]);
  });

  it("names a missing field and a misspelt one in plain words", async () => {
    const { maxConcurrent: _, ...withoutMax } = chat;
    const file = writeFile("typo.json", {
      team: "acme",
      pools: [{ ...withoutMax, maxConcurent: 2, queue: { size: 1, timeout: 5 } }],
    });
    const result = await sluice(["apply", file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("pools.0.maxConcurrent: Required.");
    expect(result.stderr).toContain("pools.0.maxConcurent: Unknown field (check the spelling).");
    expect(result.stderr).toContain("pools.0.queue.timeout: Unknown field (check the spelling).");
    expect(result.stderr).not.toContain("Invalid key");
    const notAnObject = await sluice(["apply", writeFile("list.json", [])]);
    expect(notAnObject.stderr).toContain("team: Required.");
  });

  it("refuses readPaths for a method readMethods does not list (it would admit nothing)", async () => {
    const scoped = { ...chat, readMethods: ["PROPFIND"], readPaths: { post: ["/v1/embeddings"] } };
    const result = await sluice([
      "apply",
      writeFile("scoped.json", {
        team: "acme",
        pools: [scoped],
        budgets: [{ name: "llm", pools: [{ ...scoped, subdomain: "chat2" }] }],
      }),
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("pools.0: readPaths: POST is not in readMethods");
    expect(result.stderr).toContain("budgets.0.pools.0: readPaths: POST is not in readMethods");
    expect(await readCatalog(async (data) => data.catalog.store.listAllPools())).toEqual([]);
    const listed = await sluice([
      "apply",
      writeFile("listed.json", { team: "acme", pools: [{ ...scoped, readMethods: ["POST"] }] }),
    ]);
    expect(listed.code).toBe(0);
  });

  it("refuses duplicate subdomains and reservations above the budget", async () => {
    const duplicate = await sluice([
      "apply",
      writeFile("dup.json", { team: "acme", pools: [chat, chat] }),
    ]);
    expect(duplicate.code).toBe(2);
    expect(duplicate.stderr).toContain("Pool subdomains must be unique; repeated: chat.");
    const over = await sluice([
      "apply",
      writeFile("over.json", {
        team: "acme",
        budgets: [
          { name: "llm", originMaxConcurrent: 1, pools: [{ ...chat, reservedConcurrent: 2 }] },
        ],
      }),
    ]);
    expect(over.code).toBe(2);
    expect(over.stderr).toContain("reservedConcurrent");
  });

  it("refuses a ceiling the pools it does not list would break, unless --prune deletes them", async () => {
    const chatIn = (budget: number, ...pools: object[]) => ({
      team: "acme",
      budgets: [{ name: "llm", originMaxConcurrent: budget, pools }],
    });
    const reserved = { ...chat, reservedConcurrent: 2 };
    const other = { ...reserved, subdomain: "other" };
    expect((await sluice(["apply", writeFile("a.json", chatIn(5, reserved, other))])).code).toBe(0);
    const lowered = await sluice(["apply", writeFile("b.json", chatIn(3, reserved))]);
    expect(lowered.code).toBe(2);
    expect(lowered.stderr).toContain(
      'Budget "llm": its pools would reserve 4 (chat 2; other 2, not in this file), more than its originMaxConcurrent 3.',
    );
    expect(
      await readCatalog(
        async (data) => (await data.catalog.store.listBudgets(1))[0]?.originMaxConcurrent,
      ),
    ).toBe(5);
    // Deleting the pool the file leaves out makes the same ceiling fit.
    const pruned = await sluice(["apply", writeFile("b.json", chatIn(3, reserved)), "--prune"]);
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toContain("Deleted pool other");
  });

  it("names a missing file and invalid JSON", async () => {
    const missing = await sluice(["apply", join(dir, "nope.json")]);
    expect(missing).toMatchObject({
      code: 2,
      stderr: `Error: Cannot read ${join(dir, "nope.json")}: no such file.\n`,
    });
    const directory = await sluice(["apply", dir]);
    expect(directory).toMatchObject({
      code: 2,
      stderr: `Error: Cannot read ${dir}: it is a directory, not a file.\n`,
    });
    const broken = await sluice(["apply", writeFile("broken.json", "{ team: ")]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("is not valid JSON");
  });

  it("refuses an unknown team and a subdomain owned by another team", async () => {
    const unknown = await sluice(["apply", writeFile("a.json", { team: "globex", pools: [chat] })]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No team with slug "globex"');

    await sluice(["apply", writeFile("acme.json", { team: "acme", pools: [chat] })]);
    await sluice([
      "team",
      "create",
      "--name",
      "Globex",
      "--slug",
      "globex",
      "--owner-name",
      "Hank",
      "--owner-email",
      "hank@example.com",
    ]);
    const taken = await sluice([
      "apply",
      writeFile("globex.json", { team: "globex", pools: [chat] }),
    ]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toBe('Error: The subdomain "chat" belongs to another team.\n');
  });

  it("moves a pool between budgets and out of them", async () => {
    await sluice([
      "apply",
      writeFile("a.json", { team: "acme", budgets: [{ name: "a", pools: [chat] }, { name: "b" }] }),
    ]);
    const moved = await sluice([
      "apply",
      writeFile("b.json", { team: "acme", budgets: [{ name: "a" }, { name: "b", pools: [chat] }] }),
    ]);
    expect(moved.stdout).toContain('Updated pool chat: budget "a" → "b"');
    const out = await sluice([
      "apply",
      writeFile("c.json", { team: "acme", budgets: [{ name: "a" }, { name: "b" }], pools: [chat] }),
    ]);
    expect(out.stdout).toContain('Updated pool chat: budget "b" → null');
    expect(
      await readCatalog(
        async (data) => (await data.catalog.store.getPoolBySubdomain(1, "chat"))?.budgetId,
      ),
    ).toBeNull();
  });

  it("--prune deletes the team's pools missing from the file", async () => {
    await sluice([
      "apply",
      writeFile("a.json", { team: "acme", pools: [chat, { ...chat, subdomain: "old" }] }),
    ]);
    const kept = await sluice(["apply", writeFile("b.json", { team: "acme", pools: [chat] })]);
    expect(kept.stdout).not.toContain("old");
    const pruned = await sluice([
      "apply",
      writeFile("b.json", { team: "acme", pools: [chat] }),
      "--prune",
    ]);
    expect(pruned.stdout).toContain("Deleted pool old\n");
    expect(
      await readCatalog(async (data) =>
        (await data.catalog.store.listAllPools()).map((pool) => pool.subdomain),
      ),
    ).toEqual(["chat"]);
  });

  it("--prune deletes the team's budgets missing from the file, after their pools", async () => {
    const budgeted = { ...chat, subdomain: "gone" };
    await sluice([
      "apply",
      writeFile("a.json", {
        team: "acme",
        budgets: [{ name: "keep" }, { name: "old", pools: [budgeted] }],
        pools: [chat],
      }),
    ]);
    const file = writeFile("b.json", { team: "acme", budgets: [{ name: "keep" }], pools: [chat] });
    const kept = await sluice(["apply", file]);
    expect(kept.stdout).not.toContain("old");
    const dryRun = await sluice(["apply", file, "--prune", "--dry-run"]);
    expect(dryRun.stdout).toContain("Would delete pool gone\nWould delete budget old\n");
    const pruned = await sluice(["apply", file, "--prune"]);
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toContain("Deleted pool gone\nDeleted budget old\n");
    expect(pruned.stdout).toContain("0 create, 0 update, 2 delete, 2 unchanged");
    expect(
      await readCatalog(async (data) =>
        (await data.catalog.store.listBudgets(1)).map((budget) => budget.name),
      ),
    ).toEqual(["keep"]);
  });
  describe("postgres pools", () => {
    const READ_URL = "postgres://reader:pg-secret-pw@db.internal:5432/app";
    const warehouse = {
      name: "Warehouse",
      subdomain: "warehouse",
      backend: "postgres",
      maxConcurrent: 3,
      database: { valueFromEnv: "WAREHOUSE_READ_URL", maxRows: 500 },
    };

    it("stores the read role's connection string encrypted, shows only where it goes, re-applies unchanged", async () => {
      const file = writeFile("pg.json", { team: "acme", pools: [warehouse] });
      const env = { WAREHOUSE_READ_URL: READ_URL };
      const result = await sluice(["apply", file], env);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      const { pool, stored, decrypted } = await readCatalog(async (data) => {
        const record = (await data.catalog.store.getPoolBySubdomain(1, "warehouse"))!;
        return {
          pool: record,
          stored: JSON.stringify(record),
          decrypted: data.catalog.decryptDatabaseUrl(record),
        };
      });
      expect(stored).not.toContain("pg-secret-pw");
      expect(stored).not.toContain("reader");
      expect(decrypted).toBe(READ_URL);
      expect(pool).toMatchObject({
        backend: "postgres",
        origin: "postgresql://db.internal:5432/app",
        credential: null,
        database: { maxRows: 500, maxResultBytes: 10_485_760, statementTimeoutMs: 30_000 },
      });
      expect((await sluice(["apply", file], env)).stdout).toContain("Unchanged pool warehouse");
      const status = await sluice(["status", "--team", "acme", "--json"]);
      const [listed] = JSON.parse(status.stdout)[0].pools;
      expect(listed.database).toEqual({
        maxRows: 500,
        maxResultBytes: 10_485_760,
        statementTimeoutMs: 30_000,
      });
      expect(status.stdout).not.toContain(pool.database?.connectionString.data);
      expect((await sluice(["status", "--team", "acme"])).stdout).toContain(
        'warehouse "Warehouse" → postgresql://db.internal:5432/app: max 3 concurrent, no queue, no rpm limit, key required, read-only SQL, at most 500 rows',
      );
      const rotated = await sluice(["apply", file], {
        WAREHOUSE_READ_URL: "postgres://reader:rotated-pw@db.internal:5432/app",
      });
      expect(rotated.stdout).toContain(
        "Updated pool warehouse: database connection string changed\n",
      );
      expect(rotated.stdout).not.toContain("rotated-pw");
    });

    it("refuses a postgres pool without a database, with an origin, or with a bad connection string, never echoing it", async () => {
      const { database: _, ...bare } = warehouse;
      const missing = await sluice(["apply", writeFile("a.json", { team: "acme", pools: [bare] })]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("database: Required for a postgres pool");
      const withOrigin = { ...warehouse, origin: "http://127.0.0.1:9000" };
      const origin = await sluice([
        "apply",
        writeFile("b.json", { team: "acme", pools: [withOrigin] }),
      ]);
      expect(origin.stderr).toContain("origin: A postgres pool has no origin");
      const bad = await sluice(
        ["apply", writeFile("c.json", { team: "acme", pools: [warehouse] })],
        {
          WAREHOUSE_READ_URL: "mysql://reader:leaky-pw@db/app",
        },
      );
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain("Must be a postgres:// or postgresql:// URL.");
      expect(bad.stderr).not.toContain("leaky-pw");
      expect(await readCatalog(async (data) => data.catalog.store.listAllPools())).toEqual([]);
    });
  });
});
