import { describe, expect, it } from "vitest";
import {
  budgetPoolIds,
  budgetToGovernorSettings,
  budgetUnallocated,
  poolToGovernorSettings,
} from "../../src/catalog/governor-mapping.js";
import type { BudgetRecord, PoolRecord } from "../../src/catalog/types.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { parsePoolSettings } from "../../src/governor/settings.js";
import { poolInput } from "./fixtures.js";

function pool(overrides: Partial<PoolRecord> = {}): PoolRecord {
  return { ...poolInput(), id: 1, teamId: 1, createdAt: 0, updatedAt: 0, ...overrides };
}

const budget: BudgetRecord = { id: 7, teamId: 1, name: "LLM", originMaxConcurrent: 20 };

describe("poolToGovernorSettings", () => {
  it("maps every governed setting, and the governor accepts the result", () => {
    const record = pool({
      maxConcurrent: 5,
      queueSize: 3,
      queueTimeoutMs: 15_000,
      rpm: 120,
      requestTimeoutMs: 60_000,
      termMs: 20_000,
      renewIntervalMs: 5_000,
      adaptive: false,
      budgetId: 7,
      reservedConcurrent: 2,
    });
    const settings = poolToGovernorSettings(record, budget);
    expect(settings).toEqual({
      maxConcurrent: 5,
      queue: { size: 3, timeoutMs: 15_000 },
      rpm: 120,
      requestTimeoutMs: 60_000,
      termMs: 20_000,
      renewIntervalMs: 5_000,
      adaptive: false,
      budget: { id: "7", reservedConcurrent: 2 },
    });
    expect(parsePoolSettings(settings)).toEqual(settings);
  });

  it("runs a pool without its budget when there is none or it is gone", () => {
    expect(poolToGovernorSettings(pool(), null).budget).toBeNull();
    expect(poolToGovernorSettings(pool({ budgetId: 7 }), undefined).budget).toBeNull();
  });

  it("refuses a budget that is not the pool's", () => {
    expect(() => poolToGovernorSettings(pool({ budgetId: 8 }), budget)).toThrow(
      InvalidArgumentError,
    );
    expect(() => poolToGovernorSettings(pool({ budgetId: 7, teamId: 2 }), budget)).toThrow(
      InvalidArgumentError,
    );
  });

  it("maps budgets", () => {
    expect(budgetToGovernorSettings(budget)).toEqual({ originMaxConcurrent: 20 });
  });
});

describe("budget figures", () => {
  const pools = [
    pool({ id: 1, budgetId: 7, reservedConcurrent: 5 }),
    pool({ id: 2, budgetId: 7, reservedConcurrent: 6 }),
    pool({ id: 3, budgetId: 8, reservedConcurrent: 100 }),
    pool({ id: 4, budgetId: null, reservedConcurrent: 100 }),
  ];

  it("subtracts member reservations from the origin ceiling", () => {
    expect(budgetUnallocated(budget, pools)).toBe(9);
    expect(budgetPoolIds(budget, pools)).toEqual([1, 2]);
  });

  it("is 0 without a ceiling and never negative", () => {
    expect(budgetUnallocated({ ...budget, originMaxConcurrent: null }, pools)).toBe(0);
    expect(budgetUnallocated({ ...budget, originMaxConcurrent: 4 }, pools)).toBe(0);
    expect(budgetUnallocated(budget, [])).toBe(20);
  });
});
