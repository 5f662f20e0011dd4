import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "./harness.js";

const LIMIT = 2;

/** Bodies a careless or hostile caller may send: JSON of any shape, near-misses, garbage. */
const bodyArbitrary = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 40 }),
  fc.json({ maxDepth: 2 }),
  fc
    .record(
      {
        waitMs: fc.jsonValue({ maxDepth: 1 }),
        status: fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.jsonValue({ maxDepth: 1 })),
        throttled: fc.jsonValue({ maxDepth: 1 }),
        retryAfterMs: fc.oneof(fc.double(), fc.jsonValue({ maxDepth: 1 })),
        rate: fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.record(
            { limit: fc.double(), remaining: fc.double(), resetMs: fc.double() },
            { requiredKeys: [] },
          ),
        ),
        headers: fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.dictionary(
            fc.constantFrom("retry-after", "x-ratelimit-limit-requests", "ratelimit", "x-other"),
            fc.string({ maxLength: 30 }),
          ),
        ),
      },
      { requiredKeys: [] },
    )
    .map((value) => JSON.stringify(value)),
);

const headerValue = fc.oneof(
  fc.constantFrom("0", "1", "-1", "1.5", "true", "", "  7 ", "1e3", "99999999999999999999"),
  fc.string({ maxLength: 12 }).filter((text) => /^[\t\x20-\x7e]*$/.test(text)),
);

const requestArbitrary = fc.record({
  op: fc.constantFrom("acquire", "renew", "release"),
  /** Index into the slots granted so far; null: an id that was never granted. */
  slot: fc.option(fc.nat(), { nil: null }),
  strangeId: fc.oneof(
    fc.uuid(),
    fc.constantFrom("%2e%2e", "x".repeat(300), "%00", "null", "..%2F"),
    fc.string({ minLength: 1, maxLength: 20 }).map(encodeURIComponent),
  ),
  body: bodyArbitrary,
  contentType: fc.constantFrom(
    "application/json",
    "text/plain",
    "application/x-www-form-urlencoded",
  ),
  queueTimeout: fc.option(headerValue, { nil: undefined }),
  noQueue: fc.option(headerValue, { nil: undefined }),
});

/**
 * Random Lock API traffic with malformed bodies, headers and slot ids, over real sockets:
 * every answer is the contract's `{error, message}` shape or a success, never a 5xx; the
 * pool never holds more than its limit; and once every granted slot is released, none is
 * left held (nothing lost or leaked by a bad request).
 */
describe("Lock API under malformed input (property)", () => {
  let h: Harness;
  let key: string;

  beforeAll(async () => {
    h = await createHarness();
    await h.addPool({ subdomain: "llm", maxConcurrent: LIMIT, queueSize: 0 });
    key = (await h.mintKey("llm")).plaintext;
  });
  afterAll(async () => h.close());

  it("answers every request in the contract's shape, and loses or leaks no slot", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(requestArbitrary, { minLength: 1, maxLength: 8 }),
        async (requests) => {
          const granted: string[] = [];
          for (const request of requests) {
            const headers: Record<string, string> = { "content-type": request.contentType };
            if (request.queueTimeout !== undefined)
              headers["x-svc-queue-timeout-ms"] = request.queueTimeout;
            if (request.noQueue !== undefined) headers["x-svc-no-queue"] = request.noQueue;
            const slotId =
              request.slot === null || granted.length === 0
                ? request.strangeId
                : (granted[request.slot % granted.length] as string);
            const path =
              request.op === "acquire"
                ? "/pools/llm/lock/acquire"
                : `/pools/llm/lock/${slotId}/${request.op}`;
            const response = await h.lockPost(path, { key, headers, body: request.body });
            const text = await response.text();
            expect(response.status, `${request.op} → ${text}`).toBeLessThan(500);
            const body = JSON.parse(text) as Record<string, unknown>;
            if (response.status >= 400) {
              expect(typeof body.error).toBe("string");
              expect(typeof body.message).toBe("string");
            } else if (request.op === "acquire") {
              granted.push(body.slotId as string);
            }
            expect((await h.governor.status("llm")).held).toBeLessThanOrEqual(LIMIT);
          }
          for (const slotId of granted) await h.governor.release("llm", slotId);
          expect((await h.governor.status("llm")).held).toBe(0);
        },
      ),
      {
        numRuns: Number(process.env.FUZZ_RUNS ?? 120),
        seed: Number(process.env.FUZZ_SEED ?? 20261122),
      },
    );
  });
});
