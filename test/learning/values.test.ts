import { describe, expect, it } from "vitest";
import {
  MAX_DURATION_MS,
  parseCount,
  parseDateToMs,
  parseGoDurationToMs,
  parseResetToMs,
} from "../../src/learning/values.js";

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);

describe("parseGoDurationToMs (OpenAI resets)", () => {
  it.each([
    ["1s", 1000],
    ["6m0s", 360_000],
    ["12ms", 12],
    ["1h2m3.5s", 3_723_500],
    ["0.5s", 500],
    ["0s", 0],
    ["2m59.56s", 179_560],
    ["7.66s", 7660],
    ["30", 30_000],
  ])("reads %s as %d ms", (text, expected) => {
    expect(parseGoDurationToMs(text)).toBeCloseTo(expected, 6);
  });

  it.each(["", "s", "6q", "-1s", "1s2", "1 s", "abc", "1e3s", "9999999h"])("ignores %j", (text) => {
    expect(parseGoDurationToMs(text)).toBeUndefined();
  });
});

describe("parseCount", () => {
  it("reads plain and list-leading counts", () => {
    expect(parseCount("100")).toBe(100);
    expect(parseCount("100, 100;w=60")).toBe(100);
    expect(parseCount("12.5")).toBe(12.5);
  });

  it.each(["-1", "NaN", "Infinity", "1e3", "0x10", "", " ", "ten", "1".repeat(20)])(
    "ignores %j",
    (text) => {
      expect(parseCount(text)).toBeUndefined();
    },
  );
});

describe("parseResetToMs", () => {
  it("tells delta seconds, epoch seconds and epoch ms apart by magnitude", () => {
    expect(parseResetToMs("60", NOW)).toBe(60_000);
    expect(parseResetToMs(String(NOW / 1000 + 1800), NOW)).toBe(1_800_000);
    expect(parseResetToMs(String(NOW + 30_000), NOW)).toBe(30_000);
  });

  it("reads durations and dates, and clamps a past reset to 0", () => {
    expect(parseResetToMs("1m30s", NOW)).toBe(90_000);
    expect(parseResetToMs("2025-01-15T12:00:12Z", NOW)).toBe(12_000);
    expect(parseResetToMs(String(NOW / 1000 - 5), NOW)).toBe(0);
  });

  it("ignores absurd values beyond ten years", () => {
    expect(parseResetToMs(String(MAX_DURATION_MS / 1000 + 1), NOW)).toBeUndefined();
    expect(parseResetToMs("2099-01-01T00:00:00Z", NOW)).toBeUndefined();
  });
});

describe("parseDateToMs", () => {
  it("reads HTTP-dates and RFC 3339 date-times relative to now", () => {
    expect(parseDateToMs("Wed, 15 Jan 2025 12:01:00 GMT", NOW)).toBe(60_000);
    expect(parseDateToMs("2025-01-15T12:00:00.250+00:00", NOW)).toBe(250);
  });

  it("refuses bare numbers that Date.parse would read as years", () => {
    expect(parseDateToMs("5", NOW)).toBeUndefined();
    expect(parseDateToMs("tomorrow", NOW)).toBeUndefined();
  });
});
