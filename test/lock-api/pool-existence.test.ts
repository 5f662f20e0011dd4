import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { poolToGovernorSettings } from "../../src/catalog/governor-mapping.js";
import { poolInput } from "../catalog/fixtures.js";
import { poolRequest } from "../proxy/client.js";
import { createHarness, type Harness, POOL_DOMAIN, readBody } from "./harness.js";

/**
 * Issue 23, item 2: a caller without a valid key learns nothing about which pools exist.
 * A missing pool answers every request the way an existing pool that needs a key answers it:
 * the same 401 `unauthorized`, the same body, the same Sluice headers, on the pool hosts and
 * on the Lock API, whichever team the pool belongs to. Callers with a valid key are served as
 * the contract says.
 */
describe("pool existence is no oracle", () => {
  let h: Harness;
  let ownKey: string;
  let theirKey: string;
  let apiToken: string;

  beforeEach(async () => {
    h = await createHarness();
    // Pools of two teams, with both Authorization settings: none may answer differently.
    await h.addPool({ subdomain: "llm", maxConcurrent: 1 });
    await h.addPool({ subdomain: "bearer", maxConcurrent: 1, allowAuthorizationHeader: true });
    ownKey = (await h.mintKey("llm")).plaintext;
    const other = await h.catalog.createTeamWithOwner({
      teamName: "Globex",
      slug: "globex",
      ownerName: "Hank",
      ownerEmail: "hank@globex.test",
    });
    const theirs = await h.catalog.store.upsertPool(
      other.team.id,
      poolInput({ subdomain: "theirs", maxConcurrent: 1 }),
    );
    await h.governor.definePool("theirs", poolToGovernorSettings(theirs, null));
    theirKey = (await h.catalog.mintPoolKey({ teamId: other.team.id, subdomain: "theirs" }))
      .plaintext;
    apiToken = await h.mintApiToken();
  });
  afterEach(async () => h.close());

  const existing = ["llm", "bearer", "theirs"];
  const missing = ["nope", "x".repeat(64), "a".repeat(5_000)];
  /** Requests of callers without a valid key of the pools they ask (`theirKey` is another team's). */
  const withoutValidKey = (): [string, Record<string, string>][] => [
    ["no key", {}],
    ["a made-up key", { "x-svc-key": "slc_key_madeup" }],
    ["an empty key", { "x-svc-key": "" }],
    ["a key in Authorization", { authorization: `Bearer ${ownKey.replace(/.$/, "x")}` }],
    ["a Control API token", { "x-svc-key": apiToken }],
  ];

  /** The parts of an answer a caller could compare. */
  const visible = (status: number, headers: Record<string, unknown>, body: string) => ({
    status,
    body,
    contentType: headers["content-type"],
    rejectedBy: headers["x-svc-rejected-by"],
    governorHeaders: Object.keys(headers).filter((name) => /^x-svc-(?!rejected-by)/.test(name)),
  });

  const acquire = async (pool: string, headers: Record<string, string>) => {
    const response = await h.lockPost(`/pools/${pool}/lock/acquire`, { headers });
    return visible(response.status, Object.fromEntries(response.headers), await response.text());
  };
  const proxied = async (pool: string, headers: Record<string, string>) => {
    const host = `${pool.length > 63 ? pool.slice(0, 63) : pool}.${POOL_DOMAIN}`;
    const reply = await poolRequest(h.proxy.port, { host, method: "POST", path: "/v1", headers });
    return visible(reply.status, reply.headers, reply.body);
  };

  for (const [surface, ask] of [
    ["Lock API acquire", acquire],
    ["pool proxy", proxied],
  ] as const) {
    it(`${surface}: missing and existing pools give the same 401 to callers without a valid key`, async () => {
      for (const [what, headers] of withoutValidKey()) {
        const reference = await ask("llm", headers);
        expect(reference.status, what).toBe(401);
        expect(JSON.parse(reference.body).error, what).toBe("unauthorized");
        expect(reference.governorHeaders, what).toEqual([]);
        for (const pool of [...existing, ...missing]) {
          if (surface === "pool proxy" && pool.length > 63) continue;
          expect(await ask(pool, headers), `${what} on ${pool.slice(0, 10)}`).toEqual(reference);
        }
      }
      // Another team's valid key is no valid key here: the same answer as a missing pool.
      expect(await ask("llm", { "x-svc-key": theirKey })).toEqual(
        await ask("nope", { "x-svc-key": theirKey }),
      );
    });
  }

  it("renew and release answer a missing pool like an existing one, too", async () => {
    const slot = "00000000-0000-4000-8000-000000000000";
    for (const action of ["renew", "release"]) {
      for (const [what, headers] of withoutValidKey()) {
        const answers = [];
        for (const pool of ["llm", "theirs", "nope"]) {
          const response = await h.lockPost(`/pools/${pool}/lock/${slot}/${action}`, { headers });
          answers.push({ status: response.status, body: await response.text() });
        }
        expect(answers[0]?.status, `${action}, ${what}`).toBe(401);
        expect(answers[1], `${action}, ${what}`).toEqual(answers[0]);
        expect(answers[2], `${action}, ${what}`).toEqual(answers[0]);
      }
    }
  });

  it("callers with a valid key are served as the contract says", async () => {
    const grant = await readBody(await h.lockPost("/pools/llm/lock/acquire", { key: ownKey }));
    expect(grant.slotId).toEqual(expect.any(String));
    const renew = await h.lockPost(`/pools/llm/lock/${grant.slotId}/renew`, { key: ownKey });
    expect(renew.status).toBe(200);
    const release = await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, { key: ownKey });
    expect(await readBody(release)).toEqual({ released: true });
    // Contract 4.2: a released slot is 404 not_found on renew, 200 released false on release.
    const again = await h.lockPost(`/pools/llm/lock/${grant.slotId}/renew`, { key: ownKey });
    expect(again.status).toBe(404);
    expect(await readBody(again)).toMatchObject({ error: "not_found" });
    const twice = await h.lockPost(`/pools/llm/lock/${grant.slotId}/release`, { key: ownKey });
    expect(await readBody(twice)).toEqual({ released: false });
  });
});
