import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDataDir } from "../../adapters/server/data-dir.js";
import { hasControlCharacter, PLAIN_TEXT_MESSAGE } from "../../src/catalog/plain-text.js";
import { poolInput } from "../catalog/fixtures.js";
import { sluiceIn } from "./capture-io.js";
import { CREATE_ACME, tempDir } from "./cli-process.js";

/** Clears the screen, rings the bell, then reverses what follows it on screen. */
const HOSTILE = "Evil\u001b[2J\u0007\u202eexe.txt";

/** Whether printed text holds a raw control character or bidirectional override. */
const hasRawControl = (printed: string) => printed.split("\n").some(hasControlCharacter);

let dir: string;
let cleanup: () => void;

const sluice = (...args: string[]) => sluiceIn(dir, args);

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("sluice-control-chars-"));
  expect((await sluice(...CREATE_ACME)).code).toBe(0);
});
afterEach(async () => cleanup());

describe("names with control characters", () => {
  it("are refused by sluice apply in pool and budget names and descriptions, writing nothing", async () => {
    const file = join(dir, "hostile.json");
    const pool = { subdomain: "chat", origin: "http://127.0.0.1:9000", maxConcurrent: 2 };
    writeFileSync(
      file,
      JSON.stringify({
        team: "acme",
        budgets: [{ name: HOSTILE, pools: [{ ...pool, name: "Chat", description: HOSTILE }] }],
        pools: [{ ...pool, subdomain: "embed", name: HOSTILE }],
      }),
    );
    const result = await sluice("apply", file);
    expect(result.code).toBe(2);
    for (const path of ["budgets.0.name", "budgets.0.pools.0.description", "pools.0.name"]) {
      expect(result.stderr).toContain(`${path}: ${PLAIN_TEXT_MESSAGE}`);
    }
    const data = await openDataDir({ dataDir: dir });
    try {
      expect(await data.catalog.store.listAllPools()).toEqual([]);
    } finally {
      data.close();
    }
  });

  it("are refused by team create, user add and token create, naming the flag", async () => {
    const team = await sluice(
      ...["team", "create", "--name", HOSTILE, "--slug", "beta"],
      ...["--owner-name", "Bo", "--owner-email", "bo@beta.test"],
    );
    expect(team).toMatchObject({ code: 2, stderr: `Error: --name: ${PLAIN_TEXT_MESSAGE}\n` });
    const user = await sluice(
      ...["user", "add", "--team", "acme", "--name", HOSTILE, "--email", "bo@acme.test"],
    );
    expect(user.code).toBe(2);
    expect(user.stderr).toContain(PLAIN_TEXT_MESSAGE);
    const token = await sluice(
      ...["token", "create", "--team", "acme", "--user", "ada@example.com", "--name", HOSTILE],
      ...["--abilities", "all", "--lifetime", "1m"],
    );
    expect(token).toMatchObject({ code: 2, stderr: `Error: --name: ${PLAIN_TEXT_MESSAGE}\n` });
  });
});

describe("catalog text the CLI prints", () => {
  /** A catalog written before names were checked, or by another program. */
  async function storeHostileNames(): Promise<void> {
    const data = await openDataDir({ dataDir: dir });
    try {
      const store = data.catalog.store;
      const acme = (await store.findTeamBySlug("acme"))!;
      const budget = await store.upsertBudget(acme.id, { name: HOSTILE, originMaxConcurrent: 4 });
      await store.upsertPool(
        acme.id,
        poolInput({ name: HOSTILE, description: HOSTILE, subdomain: "chat", budgetId: budget.id }),
      );
      await store.createTeam({ name: HOSTILE, slug: "evil" });
    } finally {
      data.close();
    }
  }

  it("is escaped in status, so it cannot drive or reorder the terminal", async () => {
    await storeHostileNames();
    const result = await sluice("status");
    expect(result.code).toBe(0);
    expect(hasRawControl(result.stdout)).toBe(false);
    expect(result.stdout).toContain("Evil\\u001b[2J\\u0007\\u202eexe.txt");
  });

  it("stays valid JSON with the stored value in --json output", async () => {
    await storeHostileNames();
    const result = await sluice("status", "--json");
    expect(result.code).toBe(0);
    expect(hasRawControl(result.stdout)).toBe(false);
    expect(JSON.stringify(JSON.parse(result.stdout))).toContain(
      JSON.stringify(HOSTILE).slice(1, -1),
    );
  });

  it("is escaped in error messages that quote what was typed", async () => {
    const result = await sluice("status", "--team", "\u001b[2Jnope");
    expect(result.code).toBe(2);
    expect(hasRawControl(result.stderr)).toBe(false);
    expect(result.stderr).toContain('"\\u001b[2Jnope"');
  });
});
