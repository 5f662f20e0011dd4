import { describe, expect, it } from "vitest";
import {
  addUtcMonths,
  characterCount,
  groupIssuesByField,
  parseIsoDateTime,
} from "../../src/catalog/validation.js";

describe("parseIsoDateTime", () => {
  it("reads UTC and offset date-times", () => {
    expect(parseIsoDateTime("2030-01-01T00:00:00Z")).toBe(Date.UTC(2030, 0, 1));
    expect(parseIsoDateTime("2030-01-01T02:30:00+02:30")).toBe(Date.UTC(2030, 0, 1));
    expect(parseIsoDateTime("2029-12-31T19:00:00-05:00")).toBe(Date.UTC(2030, 0, 1));
    expect(parseIsoDateTime("2030-01-01T00:00:00.25Z")).toBe(Date.UTC(2030, 0, 1) + 250);
    expect(parseIsoDateTime("2030-01-01T00:00Z")).toBe(Date.UTC(2030, 0, 1));
    expect(parseIsoDateTime("2028-02-29T12:00:00Z")).toBe(Date.UTC(2028, 1, 29, 12));
  });

  it("keeps years before 100 as written (Date.UTC would read 0050 as 1950)", () => {
    expect(new Date(parseIsoDateTime("0050-06-01T00:00:00Z")!).toISOString()).toBe(
      "0050-06-01T00:00:00.000Z",
    );
    // 0000 is a leap year (divisible by 400); 1900 was not.
    expect(new Date(parseIsoDateTime("0000-02-29T00:00:00Z")!).toISOString()).toBe(
      "0000-02-29T00:00:00.000Z",
    );
    expect(parseIsoDateTime("0100-02-29T00:00:00Z")).toBeNull();
  });

  it("refuses malformed, zone-less and impossible values", () => {
    for (const text of [
      "",
      "tomorrow",
      "2030-01-01",
      "2030-01-01T00:00:00",
      "2030-02-30T00:00:00Z",
      "2029-02-29T00:00:00Z",
      "2030-13-01T00:00:00Z",
      "2030-01-01T24:00:00Z",
      "2030-01-01T00:60:00Z",
      "2030-01-01T00:00:00+25:00",
      " 2030-01-01T00:00:00Z",
      "1893456000000",
    ]) {
      expect(parseIsoDateTime(text), text).toBeNull();
    }
  });
});

describe("addUtcMonths", () => {
  it("adds calendar months, clamping the day and keeping the time", () => {
    const start = Date.UTC(2025, 0, 31, 10, 15);
    expect(addUtcMonths(start, 1)).toBe(Date.UTC(2025, 1, 28, 10, 15));
    expect(addUtcMonths(start, 6)).toBe(Date.UTC(2025, 6, 31, 10, 15));
    expect(addUtcMonths(start, 12)).toBe(Date.UTC(2026, 0, 31, 10, 15));
    expect(addUtcMonths(Date.UTC(2024, 1, 29), 12)).toBe(Date.UTC(2025, 1, 28));
    expect(addUtcMonths(Date.UTC(2025, 10, 15), 6)).toBe(Date.UTC(2026, 4, 15));
  });
});

describe("issues", () => {
  it("groups field issues for a 422 body", () => {
    expect(
      groupIssuesByField(["label: Too long.", "access: Bad.", "label: Other.", "Loose"]),
    ).toEqual({ label: ["Too long.", "Other."], access: ["Bad."], "": ["Loose"] });
  });

  it("counts characters, not UTF-16 units", () => {
    expect(characterCount("🔑".repeat(3))).toBe(3);
  });
});
