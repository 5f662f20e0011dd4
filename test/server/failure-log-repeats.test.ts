import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { RepeatLimiter } from "../../adapters/server/repeat-limiter.js";
import { observeRequests } from "../../adapters/server/request-log.js";
import { createServerLog } from "../../adapters/server/server-log.js";

/** A server log in JSON lines, kept for the test to read. */
function capturedLog() {
  const lines: Record<string, unknown>[] = [];
  const log = createServerLog("json", (line) => lines.push(JSON.parse(line)));
  return { log, lines };
}

describe("failure lines under a flood", () => {
  it("writes the first lines per pool and status, then one count when the window ends", async () => {
    const { log, lines } = capturedLog();
    const requests = observeRequests({
      log,
      logRequests: false,
      poolOf: (request) => new URL(request.url).hostname.split(".")[0] ?? null,
      failureLines: { burst: 3, windowMs: 150 },
    });
    // Sluice's own queue timeout, and an origin's own 503, on two pools.
    const app = requests.observe({
      fetch: (request) =>
        new URL(request.url).pathname === "/timeout"
          ? Response.json(
              { error: "timeout", message: "No slot within the wait." },
              { status: 504, headers: { "x-svc-rejected-by": "sluice" } },
            )
          : new Response("busy", { status: 503 }),
    });
    for (let i = 0; i < 10; i++) {
      await app.fetch(new Request("http://chat.pools.test/timeout"));
      await app.fetch(new Request("http://chat.pools.test/overloaded"));
    }
    await app.fetch(new Request("http://embed.pools.test/overloaded"));
    await expect
      .poll(() => lines.filter((line) => line.msg === "Request failed").length)
      .toBe(3 + 3 + 1);
    const failed = (pool: string, status: number) =>
      lines.filter(
        (line) => line.msg === "Request failed" && line.pool === pool && line.status === status,
      );
    expect(failed("chat", 504)).toHaveLength(3);
    expect(failed("chat", 504)[0]).toMatchObject({ cause: "No slot within the wait." });
    expect(failed("chat", 503)).toHaveLength(3);
    expect(failed("embed", 503)).toHaveLength(1);

    await sleep(250);
    const counts = lines.filter((line) => line.msg === "Similar request failures not logged");
    expect(counts).toHaveLength(2);
    expect(counts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ level: "warn", pool: "chat", status: 504, notLogged: 7 }),
        expect.objectContaining({ level: "warn", pool: "chat", status: 503, notLogged: 7 }),
      ]),
    );
    // A new window: lines are written again.
    await app.fetch(new Request("http://chat.pools.test/timeout"));
    await expect.poll(() => failed("chat", 504).length).toBe(4);
  });

  it("reports nothing for a window that held nothing back", async () => {
    const reports: [string, number][] = [];
    const limiter = new RepeatLimiter({
      burst: 2,
      windowMs: 50,
      onHeldBack: (key, count) => reports.push([key, count]),
    });
    expect([limiter.allow("a"), limiter.allow("a"), limiter.allow("b")]).toEqual([
      true,
      true,
      true,
    ]);
    await sleep(100);
    expect(reports).toEqual([]);
  });
});
