import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import {
  OutcomeReportSchema,
  parseOutcome,
  validateOutcomeReport,
} from "../../src/learning/parse-outcome.js";

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);

describe("parseOutcome", () => {
  it("treats a 429 status or a throttled count as throttled", () => {
    expect(parseOutcome({ status: 429 }, NOW).throttled).toBe(true);
    expect(parseOutcome({ status: 200, throttled: 2 }, NOW).throttled).toBe(true);
    expect(parseOutcome({ status: 200, throttled: 0 }, NOW).throttled).toBe(false);
    expect(parseOutcome({}, NOW)).toStrictEqual({
      status: null,
      throttled: false,
      retryAfterMs: null,
      rate: null,
    });
  });

  it("lets rate fields override the same fields parsed from headers, keeping the others", () => {
    const outcome = parseOutcome(
      {
        status: 200,
        rate: { remaining: 3, tokenLimit: 999 },
        headers: {
          "x-ratelimit-limit-requests": "500",
          "x-ratelimit-remaining-requests": "40",
          "x-ratelimit-reset-requests": "2s",
        },
      },
      NOW,
    );
    expect(outcome.rate).toStrictEqual({
      limit: 500,
      windowMs: 60_000,
      remaining: 3,
      resetMs: 2000,
      tokenLimit: 999,
    });
  });

  it("uses rate alone when no headers are sent", () => {
    expect(parseOutcome({ rate: { limit: 10, windowMs: 1000 } }, NOW).rate).toStrictEqual({
      limit: 10,
      windowMs: 1000,
    });
  });

  it("prefers the report's retryAfterMs over header hints", () => {
    expect(
      parseOutcome({ retryAfterMs: 250, headers: { "retry-after": "9" } }, NOW).retryAfterMs,
    ).toBe(250);
    expect(parseOutcome({ headers: { "retry-after": "9" } }, NOW).retryAfterMs).toBe(9000);
  });

  it("ignores out-of-range values of an unvalidated report", () => {
    const outcome = parseOutcome(
      {
        status: 99,
        throttled: Number.NaN,
        retryAfterMs: -5,
        rate: { limit: -1, windowMs: 0, remaining: Number.POSITIVE_INFINITY, resetMs: 1e15 },
        headers: { "retry-after": "7" },
      },
      NOW,
    );
    expect(outcome).toStrictEqual({
      status: null,
      throttled: false,
      retryAfterMs: 7000,
      rate: null,
    });
  });
});

describe("validateOutcomeReport", () => {
  it("keeps a valid report whole and reports no issues", () => {
    const input = {
      status: 429,
      throttled: 3,
      retryAfterMs: 1500,
      rate: { limit: 500, remaining: 0, resetMs: 2000, windowMs: 60_000 },
      headers: { "retry-after": "2", "x-multi": ["a", "b"], "x-count": 7 },
    };
    expect(validateOutcomeReport(input)).toStrictEqual({ report: input, issues: [] });
  });

  it("drops status 99 and throttled -1 and keeps the rest", () => {
    const { report, issues } = validateOutcomeReport({
      status: 99,
      throttled: -1,
      retryAfterMs: 10,
    });
    expect(report).toStrictEqual({ retryAfterMs: 10 });
    expect(issues).toHaveLength(2);
    expect(issues[0]).toMatch(/^status: .*99/);
    expect(issues[1]).toMatch(/^throttled: /);
  });

  it("drops non-integer and wrongly typed scalars", () => {
    const { report, issues } = validateOutcomeReport({
      status: 200.5,
      throttled: "2",
      retryAfterMs: null,
    });
    expect(report).toStrictEqual({});
    expect(issues.map((issue) => issue.split(":")[0])).toStrictEqual([
      "status",
      "throttled",
      "retryAfterMs",
    ]);
  });

  it("drops bad rate fields one by one", () => {
    const { report, issues } = validateOutcomeReport({
      rate: { limit: 100, remaining: -3, resetMs: "soon", windowMs: 0, unknownField: 1 },
    });
    expect(report).toStrictEqual({ rate: { limit: 100 } });
    expect(issues.map((issue) => issue.split(":")[0])).toStrictEqual([
      "rate.remaining",
      "rate.resetMs",
      "rate.windowMs",
    ]);
  });

  it("drops a rate that is not an object", () => {
    expect(validateOutcomeReport({ rate: [1, 2] })).toStrictEqual({
      report: {},
      issues: ["rate: expected an object, received an array"],
    });
  });

  it("drops garbage header values and keeps the good ones", () => {
    const { report, issues } = validateOutcomeReport({
      headers: {
        "retry-after": "5",
        "x-object": { nested: true },
        "x-mixed": ["a", 1],
        "x-bool": true,
      },
    });
    expect(report).toStrictEqual({ headers: { "retry-after": "5" } });
    expect(issues.map((issue) => issue.split(":")[0])).toStrictEqual([
      "headers.x-object",
      "headers.x-mixed",
      "headers.x-bool",
    ]);
  });

  it("drops headers that are not an object at all", () => {
    for (const headers of ["retry-after: 5", 42, true]) {
      const { report, issues } = validateOutcomeReport({ status: 200, headers });
      expect(report).toStrictEqual({ status: 200 });
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatch(/^headers: /);
    }
  });

  it("caps the number of header issues listed", () => {
    const headers = Object.fromEntries(
      Array.from({ length: 25 }, (_, index) => [`x-${index}`, {}]),
    );
    const { issues } = validateOutcomeReport({ headers });
    expect(issues).toHaveLength(11);
    expect(issues[10]).toBe("headers: 15 more invalid header values ignored");
  });

  it("accepts a Headers object and pair lists from programmatic callers", () => {
    expect(validateOutcomeReport({ headers: new Headers({ "Retry-After": "5" }) })).toStrictEqual({
      report: { headers: { "retry-after": "5" } },
      issues: [],
    });
    const { report, issues } = validateOutcomeReport({ headers: [["retry-after", "5"], "junk"] });
    expect(report).toStrictEqual({ headers: { "retry-after": "5" } });
    expect(issues).toStrictEqual(["headers[1]: expected a [name, value] pair"]);
  });

  it("accepts no body, and turns a non-object body into one issue", () => {
    expect(validateOutcomeReport(undefined)).toStrictEqual({ report: {}, issues: [] });
    expect(validateOutcomeReport(null)).toStrictEqual({ report: {}, issues: [] });
    const { report, issues } = validateOutcomeReport("status=200");
    expect(report).toStrictEqual({});
    expect(issues).toHaveLength(1);
  });

  it("yields a report that parseOutcome reads", () => {
    const { report } = validateOutcomeReport({
      status: 429,
      headers: { "Retry-After": "3" },
      throttled: -1,
    });
    expect(parseOutcome(report, NOW)).toStrictEqual({
      status: 429,
      throttled: true,
      retryAfterMs: 3000,
      rate: null,
    });
  });
});

describe("OutcomeReportSchema", () => {
  it("is a strict schema over the same fields", () => {
    expect(v.safeParse(OutcomeReportSchema, { status: 503, retryAfterMs: 1000 }).success).toBe(
      true,
    );
    expect(v.safeParse(OutcomeReportSchema, { status: 600 }).success).toBe(false);
    expect(
      v.safeParse(OutcomeReportSchema, { retryAfterMs: Number.POSITIVE_INFINITY }).success,
    ).toBe(false);
  });
});

describe("OutcomeReportSchema as JSON Schema", () => {
  it.each(["draft-07", "draft-2020-12", "openapi-3.0"] as const)(
    "converts for %s without losing bounds",
    (target) => {
      const schema = toJsonSchema(OutcomeReportSchema, { target }) as {
        properties: Record<string, { minimum?: number; maximum?: number }>;
      };
      expect(schema.properties.status).toMatchObject({ minimum: 100, maximum: 599 });
      expect(Object.keys(schema.properties)).toStrictEqual([
        "status",
        "throttled",
        "retryAfterMs",
        "rate",
        "headers",
      ]);
    },
  );
});
