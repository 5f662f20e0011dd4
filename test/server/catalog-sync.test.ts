import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCatalogSync, describeSync } from "../../adapters/server/catalog-sync.js";
import { MemoryCatalogStore } from "../../src/catalog/memory-catalog-store.js";
import type { TeamRecord } from "../../src/catalog/types.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { RejectedError } from "../../src/errors.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import type { Governor } from "../../src/governor/types.js";
import { poolInput } from "./fixtures.js";

describe("catalog → governor sync", () => {
  let clock: ManualClock;
  let store: MemoryCatalogStore;
  let governor: Governor;
  let team: TeamRecord;
  let lines: string[];

  beforeEach(async () => {
    clock = new ManualClock();
    store = new MemoryCatalogStore({ clock });
    governor = createGovernor({ clock });
    team = await store.createTeam({ name: "Acme", slug: "acme" });
    lines = [];
  });

  afterEach(async () => {
    await governor.close();
  });

  const newSync = () =>
    createCatalogSync({ store, governor, clock, log: (line) => lines.push(line) });

  it("defines every budget (by id) and pool (by subdomain) at start", async () => {
    const budget = await store.upsertBudget(team.id, { name: "llm", originMaxConcurrent: 5 });
    await store.upsertPool(
      team.id,
      poolInput("chat", { budgetId: budget.id, reservedConcurrent: 2 }),
    );
    await store.upsertPool(team.id, poolInput("embed"));
    const report = await newSync().syncNow();
    expect(report.definedBudgets).toEqual([String(budget.id)]);
    expect(describeSync(report)).toContain(`1 budget defined (llm #${budget.id})`);
    expect(report.definedPools.sort()).toEqual(["chat", "embed"]);
    expect(governor.pools().sort()).toEqual(["chat", "embed"]);
    expect(governor.poolSettings("chat")?.budget).toEqual({
      id: String(budget.id),
      reservedConcurrent: 2,
    });
    expect(governor.poolSettings("embed")?.budget).toBeNull();
  });

  it("applies new limits to a pool in place, keeping the slots already held", async () => {
    await store.upsertPool(team.id, poolInput("chat", { maxConcurrent: 3 }));
    const sync = newSync();
    await sync.syncNow();
    const first = await governor.acquire("chat");
    const second = await governor.acquire("chat");

    await store.upsertPool(team.id, poolInput("chat", { maxConcurrent: 1 }));
    const report = await sync.syncIfChanged();
    expect(report?.updatedPools).toEqual(["chat"]);
    expect(governor.poolSettings("chat")?.maxConcurrent).toBe(1);
    expect((await governor.status("chat")).held).toBe(2);
    await expect(governor.acquire("chat")).rejects.toBeInstanceOf(RejectedError);

    expect(await governor.release("chat", first.slotId)).toEqual({ released: true });
    expect(await governor.release("chat", second.slotId)).toEqual({ released: true });
    await expect(governor.acquire("chat")).resolves.toMatchObject({ effectiveLimit: 1 });
  });

  it("removes pools deleted from the catalog", async () => {
    const budget = await store.upsertBudget(team.id, { name: "llm", originMaxConcurrent: 5 });
    const chat = await store.upsertPool(team.id, poolInput("chat", { budgetId: budget.id }));
    await store.upsertPool(team.id, poolInput("embed"));
    const sync = newSync();
    await sync.syncNow();

    await store.deletePool(team.id, chat.id);
    const report = await sync.syncIfChanged();
    expect(report?.removedPools).toEqual(["chat"]);
    expect(governor.pools()).toEqual(["embed"]);
  });

  it("reports each removed pool to onPoolRemoved after the governor dropped it", async () => {
    const chat = await store.upsertPool(team.id, poolInput("chat"));
    const removed: string[] = [];
    const sync = createCatalogSync({
      store,
      governor,
      clock,
      onPoolRemoved: (subdomain) => {
        removed.push(`${subdomain}:${governor.pools().join(",")}`);
      },
    });
    await sync.syncNow();
    await store.deletePool(team.id, chat.id);
    await sync.syncIfChanged();
    expect(removed).toEqual(["chat:"]);
  });

  it("treats a subdomain taken by a new pool (another team's) as a removal and a new pool", async () => {
    const chat = await store.upsertPool(team.id, poolInput("chat", { maxConcurrent: 1 }));
    const removed: string[] = [];
    const sync = createCatalogSync({
      store,
      governor,
      clock,
      onPoolRemoved: (subdomain) => {
        removed.push(subdomain);
      },
    });
    await sync.syncNow();
    const held = await governor.acquire("chat");

    // Deleted and re-created with the same settings between two syncs.
    await store.deletePool(team.id, chat.id);
    const globex = await store.createTeam({ name: "Globex", slug: "globex" });
    await store.upsertPool(globex.id, poolInput("chat", { maxConcurrent: 1 }));
    const report = await sync.syncIfChanged();
    expect(report).toMatchObject({ removedPools: ["chat"], definedPools: ["chat"] });
    expect(removed).toEqual(["chat"]);
    // The old pool's slot is not the new pool's: its limit is free, the old slot is gone.
    await expect(governor.acquire("chat")).resolves.toMatchObject({ slotId: expect.any(String) });
    expect(await governor.release("chat", held.slotId)).toEqual({ released: false });
    expect(await sync.syncIfChanged()).toBeNull();
  });

  it("does nothing when the change marker did not move, and pushes only what changed", async () => {
    await store.upsertPool(team.id, poolInput("chat"));
    await store.upsertPool(team.id, poolInput("embed"));
    const sync = newSync();
    await sync.syncNow();
    expect(await sync.syncIfChanged()).toBeNull();

    await store.upsertPool(team.id, poolInput("embed", { rpm: 60 }));
    const report = await sync.syncIfChanged();
    expect(report).toMatchObject({ definedPools: [], updatedPools: ["embed"], removedPools: [] });
    expect(governor.poolSettings("embed")?.rpm).toBe(60);
  });

  it("checks the catalog every interval once started, and stops", async () => {
    const sync = newSync();
    await sync.syncNow();
    sync.start(1_000);
    await store.upsertPool(team.id, poolInput("late"));
    await clock.advance(999);
    expect(governor.pools()).toEqual([]);
    await clock.advance(1);
    expect(governor.pools()).toEqual(["late"]);
    expect(lines).toContain("Catalog synced: 1 pool defined (late)");

    // A change of the marker that changes no pool (a token used, say) logs nothing.
    await store.createTeam({ name: "Globex", slug: "globex" });
    await clock.advance(1_000);
    expect(lines).toEqual(["Catalog synced: 1 pool defined (late)"]);

    await sync.stop();
    await store.upsertPool(team.id, poolInput("later"));
    await clock.advance(5_000);
    expect(governor.pools()).toEqual(["late"]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("moves a pool out of a budget before removing the budget", async () => {
    const budget = await store.upsertBudget(team.id, { name: "llm", originMaxConcurrent: 5 });
    await store.upsertPool(team.id, poolInput("chat", { budgetId: budget.id }));
    const sync = newSync();
    await sync.syncNow();
    await store.upsertPool(team.id, poolInput("chat", { budgetId: null }));
    const report = await sync.syncIfChanged();
    expect(report?.updatedPools).toEqual(["chat"]);
    expect(governor.poolSettings("chat")?.budget).toBeNull();
  });

  it("lowers a ceiling and its reservations together, in either order of need", async () => {
    const budget = await store.upsertBudget(team.id, { name: "llm", originMaxConcurrent: 6 });
    const reserve = async (a: number, b: number) => {
      await store.upsertPool(
        team.id,
        poolInput("pa", { budgetId: budget.id, reservedConcurrent: a }),
      );
      await store.upsertPool(
        team.id,
        poolInput("pb", { budgetId: budget.id, reservedConcurrent: b }),
      );
    };
    await reserve(2, 3);
    const sync = newSync();
    await sync.syncNow();
    // Down: the ceiling (3) is below the reservations still applied (5) until the pools go.
    await store.upsertBudget(team.id, { name: "llm", originMaxConcurrent: 3 });
    await reserve(1, 2);
    const down = await sync.syncIfChanged();
    expect(down?.updatedBudgets).toEqual([String(budget.id)]);
    expect(down?.updatedPools.sort()).toEqual(["pa", "pb"]);
    expect(lines.filter((line) => line.startsWith("Could not"))).toEqual([]);
    expect(governor.poolSettings("pb")?.budget?.reservedConcurrent).toBe(2);
    // Up again: the ceiling first, then the reservations that need it.
    await store.upsertBudget(team.id, { name: "llm", originMaxConcurrent: 10 });
    await reserve(4, 5);
    const up = await sync.syncIfChanged();
    expect(up?.updatedPools.sort()).toEqual(["pa", "pb"]);
    expect(governor.poolSettings("pa")?.budget?.reservedConcurrent).toBe(4);
    // Later changes still apply (a refused budget used to stop every sync after it).
    await store.upsertPool(team.id, poolInput("pc", { maxConcurrent: 1 }));
    expect((await sync.syncIfChanged())?.definedPools).toEqual(["pc"]);
  });

  it("moves pools between budgets and trades reservations without a refused step", async () => {
    const bx = await store.upsertBudget(team.id, { name: "bx", originMaxConcurrent: 4 });
    const by = await store.upsertBudget(team.id, { name: "by", originMaxConcurrent: 3 });
    const place = (pool: string, budgetId: number, reservedConcurrent: number) =>
      store.upsertPool(
        team.id,
        poolInput(pool, { maxConcurrent: 4, budgetId, reservedConcurrent }),
      );
    place("pa", bx.id, 1);
    place("pc", bx.id, 3);
    place("pb", by.id, 3);
    const sync = newSync();
    await sync.syncNow();
    // Every single step in catalog order breaks a ceiling: pa wants 3 of bx while pc still
    // holds 3 there, pb joins bx, pc joins by whose ceiling drops to 2 while pb holds 3.
    await store.upsertBudget(team.id, { name: "by", originMaxConcurrent: 2 });
    place("pa", bx.id, 3);
    place("pb", bx.id, 1);
    place("pc", by.id, 2);
    await sync.syncIfChanged();
    expect(lines.filter((line) => line.startsWith("Could not"))).toEqual([]);
    const placed = ["pa", "pb", "pc"].map((pool) => governor.poolSettings(pool)?.budget);
    expect(placed).toEqual([
      { id: String(bx.id), reservedConcurrent: 3 },
      { id: String(bx.id), reservedConcurrent: 1 },
      { id: String(by.id), reservedConcurrent: 2 },
    ]);
    // by's ceiling is 2: pc (its only pool, limit 4) gets 2 slots, not 3.
    await governor.acquire("pc");
    await governor.acquire("pc");
    await expect(governor.acquire("pc")).rejects.toMatchObject({ reason: "budget" });
    // Two pools swapping places in full budgets.
    place("pa", bx.id, 1);
    place("pb", bx.id, 3);
    await sync.syncIfChanged();
    expect(lines.filter((line) => line.startsWith("Could not"))).toEqual([]);
    expect(governor.poolSettings("pb")?.budget?.reservedConcurrent).toBe(3);
  });

  it("describes a sync in one readable line", async () => {
    expect(
      describeSync({
        definedPools: ["chat", "embed"],
        updatedPools: [],
        removedPools: ["old"],
        definedBudgets: ["1"],
        updatedBudgets: [],
        removedBudgets: ["2"],
        budgetNames: { "1": "local-llm", "2": "old-budget" },
      }),
    ).toBe(
      "Catalog synced: 2 pools defined (chat, embed), 1 pool removed (old), " +
        "1 budget defined (local-llm #1), 1 budget removed (old-budget #2)",
    );
  });
});
