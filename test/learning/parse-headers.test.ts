import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRateLimitHeaders } from "../../src/learning/parse-headers.js";
import type { HeadersLike, RateInfo } from "../../src/learning/types.js";

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const NOW_S = NOW / 1000;

interface DialectCase {
  name: string;
  headers: Record<string, string>;
  rate: RateInfo | null;
  retryAfterMs: number | null;
}

const DIALECT_CASES: DialectCase[] = [
  {
    name: "OpenAI, fresh minute",
    headers: {
      "x-ratelimit-limit-requests": "10000",
      "x-ratelimit-limit-tokens": "2000000",
      "x-ratelimit-remaining-requests": "9999",
      "x-ratelimit-remaining-tokens": "1999967",
      "x-ratelimit-reset-requests": "6ms",
      "x-ratelimit-reset-tokens": "0s",
    },
    rate: {
      limit: 10_000,
      windowMs: 60_000,
      remaining: 9999,
      resetMs: 6,
      tokenLimit: 2_000_000,
      tokenRemaining: 1_999_967,
      tokenResetMs: 0,
    },
    retryAfterMs: null,
  },
  {
    name: "OpenAI 429 with long resets and retry-after-ms",
    headers: {
      "x-ratelimit-limit-requests": "500",
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "6m0s",
      "x-ratelimit-limit-tokens": "30000",
      "x-ratelimit-remaining-tokens": "1200",
      "x-ratelimit-reset-tokens": "1h2m3.5s",
      "retry-after": "2",
      "retry-after-ms": "1500",
    },
    rate: {
      limit: 500,
      windowMs: 60_000,
      remaining: 0,
      resetMs: 360_000,
      tokenLimit: 30_000,
      tokenRemaining: 1200,
      tokenResetMs: 3_723_500,
    },
    retryAfterMs: 1500,
  },
  {
    name: "Anthropic with combined tokens",
    headers: {
      "anthropic-ratelimit-requests-limit": "50",
      "anthropic-ratelimit-requests-remaining": "49",
      "anthropic-ratelimit-requests-reset": "2025-01-15T12:00:01Z",
      "anthropic-ratelimit-tokens-limit": "40000",
      "anthropic-ratelimit-tokens-remaining": "39000",
      "anthropic-ratelimit-tokens-reset": "2025-01-15T12:00:12Z",
      "anthropic-ratelimit-input-tokens-limit": "30000",
      "anthropic-ratelimit-input-tokens-remaining": "29500",
      "anthropic-ratelimit-input-tokens-reset": "2025-01-15T12:00:12Z",
    },
    rate: {
      limit: 50,
      windowMs: 60_000,
      remaining: 49,
      resetMs: 1000,
      tokenLimit: 40_000,
      tokenRemaining: 39_000,
      tokenResetMs: 12_000,
    },
    retryAfterMs: null,
  },
  {
    name: "Anthropic 429: input/output tokens only, the tighter one wins",
    headers: {
      "anthropic-ratelimit-requests-limit": "4000",
      "anthropic-ratelimit-requests-remaining": "3999",
      "anthropic-ratelimit-requests-reset": "2025-01-15T12:00:00Z",
      "anthropic-ratelimit-input-tokens-limit": "400000",
      "anthropic-ratelimit-input-tokens-remaining": "350000",
      "anthropic-ratelimit-input-tokens-reset": "2025-01-15T12:00:07Z",
      "anthropic-ratelimit-output-tokens-limit": "80000",
      "anthropic-ratelimit-output-tokens-remaining": "0",
      "anthropic-ratelimit-output-tokens-reset": "2025-01-15T12:00:42.5Z",
      "retry-after": "43",
    },
    rate: {
      limit: 4000,
      windowMs: 60_000,
      remaining: 3999,
      resetMs: 0,
      tokenLimit: 80_000,
      tokenRemaining: 0,
      tokenResetMs: 42_500,
    },
    retryAfterMs: 43_000,
  },
  {
    name: "IETF newest draft, several policies: lowest remaining wins",
    headers: {
      "ratelimit-policy": '"burst";q=100;w=60, "daily";q=1000;w=86400',
      ratelimit: '"burst";r=50;t=30, "daily";r=20;t=3600',
    },
    rate: { limit: 1000, windowMs: 86_400_000, remaining: 20, resetMs: 3_600_000 },
    retryAfterMs: null,
  },
  {
    name: "IETF newest draft: byte quotas are not request quotas",
    headers: {
      "ratelimit-policy": '"req";q=100;w=60, "bytes";q=1000000;w=60;qu="content-bytes"',
      ratelimit: '"req";r=10;t=5, "bytes";r=0;t=5',
    },
    rate: { limit: 100, windowMs: 60_000, remaining: 10, resetMs: 5000 },
    retryAfterMs: null,
  },
  {
    name: "IETF newest draft, single policy",
    headers: { "RateLimit-Policy": '"default";q=100;w=10', RateLimit: '"default";r=0;t=7' },
    rate: { limit: 100, windowMs: 10_000, remaining: 0, resetMs: 7000 },
    retryAfterMs: null,
  },
  {
    name: "IETF policy only: the lowest rate binds",
    headers: { "RateLimit-Policy": "10;w=1, 1000;w=3600" },
    rate: { limit: 1000, windowMs: 3_600_000 },
    retryAfterMs: null,
  },
  {
    name: "IETF older separate fields with an inline policy",
    headers: {
      "RateLimit-Limit": "100, 100;w=60",
      "RateLimit-Remaining": "42",
      "RateLimit-Reset": "17",
    },
    rate: { limit: 100, windowMs: 60_000, remaining: 42, resetMs: 17_000 },
    retryAfterMs: null,
  },
  {
    name: "IETF older separate fields with RateLimit-Policy (express-rate-limit draft-7)",
    headers: {
      "RateLimit-Policy": "5;w=900",
      "RateLimit-Limit": "5",
      "RateLimit-Remaining": "4",
      "RateLimit-Reset": "900",
    },
    rate: { limit: 5, windowMs: 900_000, remaining: 4, resetMs: 900_000 },
    retryAfterMs: null,
  },
  {
    name: "IETF draft-06 dictionary form",
    headers: { RateLimit: "limit=100, remaining=50, reset=5", "RateLimit-Policy": "100;w=60" },
    rate: { limit: 100, windowMs: 60_000, remaining: 50, resetMs: 5000 },
    retryAfterMs: null,
  },
  {
    name: "GitHub core (hourly)",
    headers: {
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "4987",
      "x-ratelimit-reset": String(NOW_S + 1800),
      "x-ratelimit-used": "13",
      "x-ratelimit-resource": "core",
    },
    rate: { limit: 5000, windowMs: 3_600_000, remaining: 4987, resetMs: 1_800_000 },
    retryAfterMs: null,
  },
  {
    name: "GitHub search (per minute), remaining derived from used",
    headers: {
      "x-ratelimit-limit": "30",
      "x-ratelimit-used": "30",
      "x-ratelimit-reset": String(NOW_S + 42),
      "x-ratelimit-resource": "search",
    },
    rate: { limit: 30, windowMs: 60_000, remaining: 0, resetMs: 42_000 },
    retryAfterMs: null,
  },
  {
    name: "Discord: reset-after preferred over the epoch reset",
    headers: {
      "x-ratelimit-limit": "5",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(NOW_S + 2),
      "x-ratelimit-reset-after": "1.25",
      "x-ratelimit-bucket": "abcd1234",
    },
    rate: { limit: 5, remaining: 0, resetMs: 1250 },
    retryAfterMs: null,
  },
  {
    name: "Twitter x-rate-limit-* with epoch reset",
    headers: {
      "x-rate-limit-limit": "900",
      "x-rate-limit-remaining": "899",
      "x-rate-limit-reset": String(NOW_S + 600),
    },
    rate: { limit: 900, remaining: 899, resetMs: 600_000 },
    retryAfterMs: null,
  },
  {
    name: "generic x-ratelimit-* with delta seconds",
    headers: {
      "X-RateLimit-Limit": "120",
      "X-RateLimit-Remaining": "7",
      "X-RateLimit-Reset": "60",
    },
    rate: { limit: 120, remaining: 7, resetMs: 60_000 },
    retryAfterMs: null,
  },
  {
    name: "generic x-ratelimit-* with epoch milliseconds",
    headers: { "x-ratelimit-limit": "60", "x-ratelimit-reset": String(NOW + 30_000) },
    rate: { limit: 60, resetMs: 30_000 },
    retryAfterMs: null,
  },
  {
    name: "503 with an HTTP-date Retry-After",
    headers: { "Retry-After": "Wed, 15 Jan 2025 12:01:00 GMT", "content-type": "text/html" },
    rate: null,
    retryAfterMs: 60_000,
  },
  {
    name: "Retry-After date already past",
    headers: { "retry-after": "Wed, 15 Jan 2025 11:00:00 GMT" },
    rate: null,
    retryAfterMs: 0,
  },
  {
    name: "no rate-limit headers at all",
    headers: { "content-type": "application/json", "x-request-id": "req_123" },
    rate: null,
    retryAfterMs: null,
  },
];

describe("parseRateLimitHeaders: dialects", () => {
  it.each(DIALECT_CASES)("$name", ({ headers, rate, retryAfterMs }) => {
    expect(parseRateLimitHeaders(headers, NOW)).toStrictEqual({ rate, retryAfterMs });
  });
});

describe("parseRateLimitHeaders: header shapes", () => {
  const expected = { rate: { limit: 500, windowMs: 60_000, remaining: 12 }, retryAfterMs: 3000 };

  it("matches names case-insensitively in a record", () => {
    const headers = {
      "X-RateLimit-Limit-Requests": "500",
      "X-RATELIMIT-REMAINING-REQUESTS": "12",
      "Retry-After": "3",
    };
    expect(parseRateLimitHeaders(headers, NOW)).toStrictEqual(expected);
  });

  it("reads a fetch Headers object", () => {
    const headers = new Headers({
      "X-RateLimit-Limit-Requests": "500",
      "x-ratelimit-remaining-requests": "12",
      "retry-after": "3",
    });
    expect(parseRateLimitHeaders(headers, NOW)).toStrictEqual(expected);
  });

  it("reads [name, value] pairs, keeping the first of a repeated name", () => {
    const headers: [string, string][] = [
      ["x-ratelimit-limit-requests", "500"],
      ["x-ratelimit-remaining-requests", "12"],
      ["X-RateLimit-Remaining-Requests", "99"],
      ["retry-after", "3"],
    ];
    expect(parseRateLimitHeaders(headers, NOW)).toStrictEqual(expected);
  });

  it("takes the first element of arrays and accepts numbers", () => {
    const headers = {
      "x-ratelimit-limit-requests": 500,
      "x-ratelimit-remaining-requests": ["12", "99"],
      "retry-after": 3,
      "x-ratelimit-limit-tokens": null,
      "x-ratelimit-remaining-tokens": undefined,
    };
    expect(parseRateLimitHeaders(headers, NOW)).toStrictEqual(expected);
  });

  it("lets the vendor dialect win over the generic family when both are sent", () => {
    const headers = {
      "x-ratelimit-limit-requests": "500",
      "x-ratelimit-limit": "9",
      "x-ratelimit-remaining": "3",
    };
    expect(parseRateLimitHeaders(headers, NOW).rate).toStrictEqual({
      limit: 500,
      windowMs: 60_000,
      remaining: 3,
    });
  });
});

describe("parseRateLimitHeaders: malformed values are ignored field by field", () => {
  it.each([
    ["abc", "x-ratelimit-limit-requests"],
    ["-5", "x-ratelimit-limit-requests"],
    ["NaN", "x-ratelimit-limit-requests"],
    ["1e3", "x-ratelimit-limit-requests"],
    ["", "x-ratelimit-limit-requests"],
  ])("limit %j is dropped, the other fields stay", (bad, name) => {
    const headers = {
      [name]: bad,
      "x-ratelimit-remaining-requests": "4",
      "x-ratelimit-reset-requests": "1s",
    };
    expect(parseRateLimitHeaders(headers, NOW)).toStrictEqual({
      rate: { remaining: 4, resetMs: 1000 },
      retryAfterMs: null,
    });
  });

  it("drops unparsable resets and dates", () => {
    const headers = {
      "x-ratelimit-reset-requests": "6q",
      "anthropic-ratelimit-requests-limit": "50",
      "anthropic-ratelimit-requests-reset": "not a date",
    };
    expect(parseRateLimitHeaders(headers, NOW).rate).toStrictEqual({ limit: 50, windowMs: 60_000 });
  });

  it("drops Retry-After values that are garbage, negative or beyond ten years", () => {
    for (const value of ["soon", "-1", "400000000", "Thu, 01 Jan 2099 00:00:00 GMT"]) {
      expect(parseRateLimitHeaders({ "retry-after": value }, NOW).retryAfterMs).toBeNull();
    }
  });

  it("falls back to Retry-After when retry-after-ms is malformed", () => {
    expect(
      parseRateLimitHeaders({ "retry-after-ms": "x", "retry-after": "4" }, NOW).retryAfterMs,
    ).toBe(4000);
  });

  it("ignores a broken IETF policy but keeps the live status", () => {
    const headers = { "ratelimit-policy": '"default";q=abc;w=-1', ratelimit: '"default";r=3;t=zz' };
    expect(parseRateLimitHeaders(headers, NOW).rate).toStrictEqual({ remaining: 3 });
  });

  it("never throws and only yields finite non-negative numbers for any header values", () => {
    const names = [
      "retry-after",
      "retry-after-ms",
      "x-ratelimit-limit-requests",
      "x-ratelimit-reset-requests",
      "x-ratelimit-reset-tokens",
      "anthropic-ratelimit-requests-reset",
      "anthropic-ratelimit-output-tokens-remaining",
      "ratelimit",
      "ratelimit-policy",
      "ratelimit-limit",
      "ratelimit-reset",
      "x-ratelimit-limit",
      "x-ratelimit-reset",
      "x-ratelimit-used",
    ];
    const value = fc.oneof(
      fc.string(),
      fc.constantFrom(
        "1s",
        "6m0s",
        '"a";q=1;w=0',
        "1e309",
        "-0",
        "2025-13-45T99:99:99Z",
        '"x',
        "\\",
      ),
      fc.double().map(String),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), value), (headers) => {
        const { rate, retryAfterMs } = parseRateLimitHeaders(headers as HeadersLike, NOW);
        const numbers = [retryAfterMs, ...Object.values(rate ?? {})].filter((n) => n !== null);
        for (const n of numbers) expect(Number.isFinite(n) && (n as number) >= 0).toBe(true);
      }),
    );
  });
});
