import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectErrorBody, expectValidationError } from "./assertions.js";
import { type ControlApiHarness, START, startControlApi } from "./harness.js";

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe.each(["memory", "sqlite"] as const)(
  "GET /api/v1/pools/{pool}/metrics (%s store)",
  (kind) => {
    let api: ControlApiHarness;
    let token: string;

    beforeAll(async () => {
      api = await startControlApi(kind);
      token = await api.token("acme", ["metrics:read"]);
      // Two hours ago: 4 requests, 3 admitted (1 after queueing), 1 rejected.
      const llm = api.metrics.forPool("llm");
      const twoHoursAgo = START - 120 * MINUTE_MS;
      for (let i = 0; i < 4; i++) llm.request(twoHoursAgo);
      llm.queued(twoHoursAgo);
      llm.admitted(twoHoursAgo, 0);
      llm.admitted(twoHoursAgo, 0);
      llm.admitted(twoHoursAgo, 250);
      llm.rejected(twoHoursAgo);
      // Ten minutes ago: 1 request, admitted.
      llm.request(START - 10 * MINUTE_MS);
      llm.admitted(START - 10 * MINUTE_MS, 0);
      // Another team's pool has traffic too; it must never show.
      api.metrics.forPool("globex-llm").request(START - MINUTE_MS);
    });
    afterAll(async () => {
      await api.close();
    });

    function metrics(pool: string, query = "") {
      return api.call("GET", `/api/v1/pools/${pool}/metrics${query}`, { token });
    }

    it("summarizes the whole retention window by default, not wrapped in data", async () => {
      const response = await metrics("llm");
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        pool_id: api.acme.llm.id,
        requests: 5,
        admitted: 4,
        admit_rate: 0.8,
        queued_count: 1,
        queued_pct: 20,
        range: {
          from: iso(START - 30 * DAY_MS),
          to: iso(START),
          retention_days: 30,
          clamped: false,
        },
      });
    });

    it("counts only the requested range", async () => {
      const from = iso(START - 30 * MINUTE_MS);
      const response = await metrics("llm", `?from=${from}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        requests: 1,
        admitted: 1,
        admit_rate: 1,
        queued_count: 0,
      });
      expect(response.body.range).toEqual({
        from,
        to: iso(START),
        retention_days: 30,
        clamped: false,
      });

      const upTo = await metrics("llm", `?to=${encodeURIComponent("2030-01-15T11:00:00+00:00")}`);
      expect(upTo.body).toMatchObject({
        requests: 4,
        admitted: 3,
        queued_count: 1,
        queued_pct: 25,
      });
    });

    it("reports zeros for a pool without traffic, with its own retention", async () => {
      const response = await metrics("open");
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        pool_id: api.acme.open.id,
        requests: 0,
        admitted: 0,
        admit_rate: 0,
        queued_count: 0,
        queued_pct: 0,
        range: { from: iso(START - 7 * DAY_MS), to: iso(START), retention_days: 7, clamped: false },
      });
    });

    it("clamps a range reaching outside retention and says so", async () => {
      const response = await metrics(
        "llm",
        `?from=${iso(START - 90 * DAY_MS)}&to=${iso(START + DAY_MS)}`,
      );
      expect(response.status).toBe(200);
      expect(response.body.range).toEqual({
        from: iso(START - 30 * DAY_MS),
        to: iso(START),
        retention_days: 30,
        clamped: true,
      });
      expect(response.body.requests).toBe(5);
    });

    it("reads an unencoded + offset (a space once decoded) as the offset it was", async () => {
      // curl "…?to=2030-01-15T12:00:00+01:00": the query decodes "+" to a space.
      const response = await metrics("llm", "?to=2030-01-15T12:00:00+01:00");
      expect(response.status).toBe(200);
      expect(response.body.range.to).toBe("2030-01-15T11:00:00.000Z");
      expect(response.body.requests).toBe(4);
    });

    it("treats empty from/to as absent", async () => {
      const response = await metrics("llm", "?from=&to=");
      expect(response.status).toBe(200);
      expect(response.body.range.clamped).toBe(false);
      expect(response.body.requests).toBe(5);
    });

    it.each([
      ["a malformed from", "?from=yesterday", ["from"]],
      ["a malformed to", "?to=2030-13-01T00:00:00Z", ["to"]],
      ["a zone-less from", "?from=2030-01-01T00:00:00", ["from"]],
      ["a date without a time", "?to=2030-01-01", ["to"]],
      ["both malformed", "?from=x&to=y", ["from", "to"]],
      [
        "from after to",
        `?from=${iso(START - MINUTE_MS)}&to=${iso(START - 2 * MINUTE_MS)}`,
        ["from"],
      ],
    ])("answers 422 for %s", async (_case, query, fields) => {
      expectValidationError(await metrics("llm", query), fields);
    });

    it("answers 404 for an unknown pool, even with a bad query", async () => {
      expectErrorBody(await metrics("nope"), 404);
      expectErrorBody(await metrics("nope", "?from=x"), 404);
    });
  },
);
