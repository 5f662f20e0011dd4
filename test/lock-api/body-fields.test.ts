import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHarness, type Harness, readBody } from "./harness.js";

/** Issue 23, item 4: which fields the acquire and release bodies take. */
describe("Lock API body fields", () => {
  let h: Harness;
  let key: string;

  beforeEach(async () => {
    h = await createHarness();
    await h.addPool({ subdomain: "llm", maxConcurrent: 1, queueSize: 2, queueTimeoutMs: 10_000 });
    key = (await h.mintKey("llm")).plaintext;
  });
  afterEach(async () => h.close());

  const acquire = (body: string) => h.lockPost("/pools/llm/lock/acquire", { key, body });
  const held = async () => (await h.governor.status("llm")).held;

  it.each([
    ["a misspelt wait", '{"wait":100}', '"wait"'],
    ["an unknown field next to waitMs", '{"waitMs":100,"priority":1}', '"priority"'],
    ["a field of the release report", '{"status":200}', '"status"'],
    ["a prototype key", '{"__proto__":{"waitMs":1}}', '"__proto__"'],
  ])("%s is 400 invalid_request naming the field, and takes no slot", async (_what, body, name) => {
    const response = await acquire(body);
    expect(response.status).toBe(400);
    const answer = await readBody(response);
    expect(answer.error).toBe("invalid_request");
    expect(answer.message).toContain(`Unknown field ${name}`);
    expect(await held()).toBe(0);
  });

  it("waitMs alone, null or an empty object are fine", async () => {
    for (const body of ['{"waitMs":0}', '{"waitMs":null}', "{}"]) {
      const response = await acquire(body);
      expect(response.status, body).toBe(200);
      const { slotId } = await readBody(response);
      await h.lockPost(`/pools/llm/lock/${slotId}/release`, { key });
    }
  });

  it("a release report keeps its rate fields beyond those named (contract section 2)", async () => {
    const { slotId } = await readBody(await acquire("{}"));
    const response = await h.lockPost(`/pools/llm/lock/${slotId}/release`, {
      key,
      body: JSON.stringify({
        status: 200,
        rate: { limit: 100, remaining: 40, resetMs: 1_000, costUnits: 3, region: "eu" },
      }),
    });
    expect(response.status).toBe(200);
    expect(await readBody(response)).toEqual({ released: true });
  });

  it("a body nested thousands of levels deep is 400 invalid_request, never a 500", async () => {
    // 7000 levels in under 16 KiB: walking it recursively would overflow the stack.
    const deep = `${"[".repeat(7000)}${"]".repeat(7000)}`;
    const acquired = await acquire(`{"waitMs":${deep}}`);
    expect(acquired.status).toBe(400);
    const answer = await readBody(acquired);
    expect(answer.error).toBe("invalid_request");
    expect(answer.message).toContain("levels deep");
    expect(await held()).toBe(0);

    const { slotId } = await readBody(await acquire("{}"));
    const released = await h.lockPost(`/pools/llm/lock/${slotId}/release`, {
      key,
      body: `{"rate":{"limit":${deep}}}`,
    });
    expect(released.status).toBe(400);
    expect(await readBody(released)).toMatchObject({ error: "invalid_request", released: true });
    expect(await held()).toBe(0);
  });

  it("a JSON body starting with a UTF-8 byte order mark is read as without it", async () => {
    const response = await acquire('\uFEFF{"waitMs":0}');
    expect(response.status).toBe(200);
    const { slotId } = await readBody(response);
    const released = await h.lockPost(`/pools/llm/lock/${slotId}/release`, {
      key,
      body: '\uFEFF{"status":200}',
    });
    expect(await readBody(released)).toEqual({ released: true });
  });
});
