import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createCatalogSync } from "../../adapters/server/catalog-sync.js";
import { MemoryCatalogStore } from "../../src/catalog/memory-catalog-store.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { createGovernor } from "../../src/governor/create-governor.js";
import { poolInput } from "./fixtures.js";

const BUDGETS = ["b0", "b1", "b2"];
const POOLS = ["p0", "p1", "p2", "p3"];

/**
 * A valid catalog: each pool present or not, in a budget (or none) with a reservation its
 * budget's ceiling covers.
 */
const catalogArbitrary = fc
  .record({
    placements: fc.array(
      fc.record({
        // Absent: not in this catalog (never created, or deleted on the way to it).
        present: fc.boolean(),
        // Deleted and created again (a new catalog id) on the way to this catalog.
        recreated: fc.boolean(),
        budget: fc.option(fc.integer({ min: 0, max: BUDGETS.length - 1 }), { nil: null }),
        reserved: fc.integer({ min: 0, max: 3 }),
      }),
      { minLength: POOLS.length, maxLength: POOLS.length },
    ),
    headroom: fc.array(fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }), {
      minLength: BUDGETS.length,
      maxLength: BUDGETS.length,
    }),
  })
  .map(({ placements, headroom }) => {
    const reservedIn = BUDGETS.map((_, index) =>
      placements
        .filter((placement) => placement.present && placement.budget === index)
        .reduce((sum, placement) => sum + placement.reserved, 0),
    );
    // null headroom: no ceiling at all.
    const ceilings = headroom.map((extra, index) =>
      extra === null ? null : (reservedIn[index] as number) + extra,
    );
    return { placements, ceilings };
  });

type Catalog = typeof catalogArbitrary extends fc.Arbitrary<infer T> ? T : never;

describe("catalog sync, any valid catalog to any other", () => {
  it("reaches the new catalog without a refused step (no order of pools and budgets breaks a ceiling on the way)", async () => {
    await fc.assert(
      fc.asyncProperty(catalogArbitrary, catalogArbitrary, async (before, after) => {
        const clock = new ManualClock();
        const store = new MemoryCatalogStore({ clock });
        const governor = createGovernor({ clock });
        const team = await store.createTeam({ name: "Acme", slug: "acme" });
        const lines: string[] = [];
        const sync = createCatalogSync({ store, governor, clock, log: (line) => lines.push(line) });
        const write = async (catalog: Catalog) => {
          const ids: number[] = [];
          for (const [index, name] of BUDGETS.entries()) {
            const budget = await store.upsertBudget(team.id, {
              name,
              originMaxConcurrent: catalog.ceilings[index] ?? null,
            });
            ids.push(budget.id);
          }
          catalog.placements.forEach(async (placement, index) => {
            const existing = await store.getPoolBySubdomain(team.id, POOLS[index] as string);
            if (existing && (!placement.present || placement.recreated)) {
              await store.deletePool(team.id, existing.id);
            }
            if (!placement.present) return;
            const budgetId = placement.budget === null ? null : (ids[placement.budget] as number);
            await store.upsertPool(
              team.id,
              poolInput(POOLS[index] as string, {
                maxConcurrent: 4,
                budgetId,
                reservedConcurrent: budgetId === null ? 0 : placement.reserved,
              }),
            );
          });
          return ids;
        };
        try {
          await write(before);
          await sync.syncNow();
          const ids = await write(after);
          await sync.syncNow();
          expect(lines.filter((line) => line.startsWith("Could not"))).toEqual([]);
          after.placements.forEach((placement, index) => {
            const settings = governor.poolSettings(POOLS[index] as string);
            if (!placement.present) {
              expect(settings).toBeUndefined();
              return;
            }
            expect(settings?.budget).toEqual(
              placement.budget === null
                ? null
                : { id: String(ids[placement.budget]), reservedConcurrent: placement.reserved },
            );
          });
        } finally {
          await governor.close();
        }
      }),
      { numRuns: 300 },
    );
  });
});
