import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { poolInputOf } from "../../adapters/dashboard/catalog-writes.js";
import { CHANGED_SINCE_OPENED } from "../../adapters/dashboard/routes/pool-routes.js";
import { accessLogEntry } from "../lock-api/access-log-entry.js";
import { BASE_URL, type DashboardHarness, startDashboard } from "./harness.js";

/** Every form a new pool needs, with the defaults a person would leave alone. */
function poolForm(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    name: "Chat",
    description: "",
    subdomain: "chat",
    backend: "http",
    origin: "https://api.example.test/",
    maxConcurrent: "6",
    "queue.size": "10",
    "queue.timeoutMs": "5000",
    rpm: "",
    requestTimeoutMs: "60000",
    termMs: "30000",
    renewIntervalMs: "10000",
    adaptive: "on",
    requireKey: "on",
    allowAuthorizationHeader: "on",
    readMethods: "",
    readPaths: "",
    metricsRetentionDays: "30",
    budgetId: "",
    reservedConcurrent: "0",
    credentialHeader: "authorization",
    credentialValue: "",
    ...overrides,
  };
}

/** The version field of a budget's edit form, as a browser would post it back. */
async function budgetFormVersion(d: DashboardHarness, owner: string, id: number): Promise<string> {
  const page = await d.request(`/budget/${id}/edit`, { cookie: owner });
  return /name="version" value="([^"]+)"/.exec(page.text)![1]!;
}

describe("dashboard pages", () => {
  let d: DashboardHarness;
  let owner: string;
  let member: string;
  beforeEach(async () => {
    d = await startDashboard();
    owner = await d.signInAs(d.acme.owner.id);
    member = await d.signInAs(d.acme.member.id);
  });
  afterEach(async () => d.close());

  it("refuses a form it cannot read (multipart without a boundary) with 422 and says so, not 500", async () => {
    for (const path of ["/settings/tokens", "/pool", "/budget", "/sign-in"]) {
      const page = await d.request(path, {
        method: "POST",
        cookie: owner,
        headers: { origin: BASE_URL, "content-type": "multipart/form-data" },
        body: "name=x",
      });
      expect(page.status, path).toBe(422);
      expect(page.text, path).toContain('<p class="notice bad">The form could not be read.');
    }
  });

  describe("overview", () => {
    it("shows budgets with unallocated and their pools, with live figures that the fragment refreshes", async () => {
      const page = await d.request("/", { cookie: owner });
      expect(page.status).toBe(200);
      expect(page.text).toContain("Budget LLM");
      expect(page.text).toContain("Origin max 10 concurrent, 6 unallocated.");
      expect(page.text).toContain('hx-get="/live/overview" hx-trigger="every 2s"');
      expect(page.text).toMatch(/data-held="llm">0 \/ 8 \/ 8</);
      expect(page.text).not.toContain("globex-llm");
      const grant = await d.governor.acquire("llm");
      const live = await d.request("/live/overview", { cookie: owner });
      expect(live.text).toMatch(/data-held="llm">1 \/ 8 \/ 8</);
      expect(live.text).not.toContain("<html");
      await d.governor.release("llm", grant.slotId);
    });

    it("shows a member everything but no way to change it", async () => {
      const page = await d.request("/", { cookie: member });
      expect(page.status).toBe(200);
      expect(page.text).toContain("Budget LLM");
      expect(page.text).not.toContain("New pool");
      expect(page.text).not.toContain("/budget/");
    });
  });

  describe("budgets", () => {
    it("creates a budget with member pools, and refuses a plan over the ceiling with apply's message", async () => {
      const over = await d.request("/budget", {
        cookie: owner,
        form: {
          name: "Shared",
          originMaxConcurrent: "3",
          [`member-${d.acme.open.id}`]: "on",
          [`reserved-${d.acme.open.id}`]: "2",
          [`member-${d.acme.llm.id}`]: "on",
          [`reserved-${d.acme.llm.id}`]: "2",
        },
      });
      expect(over.status).toBe(422);
      expect(over.text).toContain(
        "Budget &quot;Shared&quot;: its pools would reserve 4 (llm 2; open 2), more than its originMaxConcurrent 3.",
      );
      expect(over.text).toContain('value="Shared"');
      const created = await d.request("/budget", {
        cookie: owner,
        form: {
          name: "Shared",
          originMaxConcurrent: "5",
          [`member-${d.acme.open.id}`]: "on",
          [`reserved-${d.acme.open.id}`]: "2",
        },
      });
      expect(created.status).toBe(303);
      const shared = (await d.store.listBudgets(d.acme.team.id)).find((b) => b.name === "Shared")!;
      expect(shared.originMaxConcurrent).toBe(5);
      const open = await d.store.getPoolBySubdomain(d.acme.team.id, "open");
      expect(open).toMatchObject({ budgetId: shared.id, reservedConcurrent: 2 });
      // The governor runs it at once (no periodic sync in this harness).
      expect(d.governor.poolSettings("open")?.budget).toEqual({
        id: String(shared.id),
        reservedConcurrent: 2,
      });
      const edit = await d.request(`/budget/${shared.id}/edit`, { cookie: owner });
      expect(edit.text).toContain("Unallocated: 3 of 5.");
    });

    it("edits, renames and deletes a budget; a budget with pools is not deleted", async () => {
      const id = d.acme.budget.id;
      const inUse = await d.request(`/budget/${id}/delete`, { cookie: owner, form: {} });
      expect(inUse.status).toBe(409);
      expect(inUse.text).toContain("still has pools (llm)");
      const otherTab = await budgetFormVersion(d, owner, id);
      const saved = await d.request(`/budget/${id}`, {
        cookie: owner,
        form: {
          name: "Models",
          originMaxConcurrent: "",
          version: await budgetFormVersion(d, owner, id),
        },
      });
      expect(saved.status).toBe(303);
      const budgets = await d.store.listBudgets(d.acme.team.id);
      // Renamed in place: the id API and MCP callers hold still names it.
      expect(budgets.map((b) => [b.id, b.name, b.originMaxConcurrent])).toEqual([
        [id, "Models", null],
      ]);
      // A tab opened before the rename is told the budget changed, not that it is gone.
      const stale = await d.request(`/budget/${id}`, {
        cookie: owner,
        form: { name: "Other", originMaxConcurrent: "3", version: otherTab },
      });
      expect(stale.status).toBe(409);
      expect(stale.text).toContain("was changed since you opened the form");
      expect((await d.store.getPoolBySubdomain(d.acme.team.id, "llm"))?.budgetId).toBeNull();
      const gone = await d.request(`/budget/${budgets[0]!.id}/delete`, {
        cookie: owner,
        form: {},
      });
      expect(gone.status).toBe(303);
      expect(await d.store.listBudgets(d.acme.team.id)).toEqual([]);
    });

    it("refuses an edit (409) when the budget or a pool changed since the form was opened, and writes no stale pool back", async () => {
      const id = d.acme.budget.id;
      const llm = () => d.store.getPoolBySubdomain(d.acme.team.id, "llm");
      const opened = await budgetFormVersion(d, owner, id);
      const before = (await llm())!;
      // Someone else raises llm's limit while the form is open…
      await d.store.upsertPool(d.acme.team.id, {
        ...poolInputOf(before),
        maxConcurrent: before.maxConcurrent + 5,
      });
      const form = {
        name: d.acme.budget.name,
        originMaxConcurrent: "",
        [`member-${before.id}`]: "on",
        [`reserved-${before.id}`]: "1",
      };
      const stale = await d.request(`/budget/${id}`, {
        cookie: owner,
        form: { ...form, version: opened },
      });
      expect(stale.status).toBe(409);
      expect(stale.text).toContain("was changed since you opened the form");
      expect(stale.text).toContain('name="version"');
      // …and their change stands: the budget save did not write llm back as it was read.
      expect((await llm())!.maxConcurrent).toBe(before.maxConcurrent + 5);
      expect((await llm())!.reservedConcurrent).toBe(before.reservedConcurrent);
      // An edit without the version it was opened at is refused the same way.
      expect((await d.request(`/budget/${id}`, { cookie: owner, form })).status).toBe(409);

      const fresh = await d.request(`/budget/${id}`, {
        cookie: owner,
        form: { ...form, version: await budgetFormVersion(d, owner, id) },
      });
      expect(fresh.status).toBe(303);
      expect(await llm()).toMatchObject({
        maxConcurrent: before.maxConcurrent + 5,
        reservedConcurrent: 1,
      });
    });

    it("shows errors next to the fields and keeps the form", async () => {
      const response = await d.request("/budget", {
        cookie: owner,
        form: { name: "", originMaxConcurrent: "-2" },
      });
      expect(response.status).toBe(422);
      expect(response.text).toMatch(/id="error-name">Required\./);
      expect(response.text).toMatch(/id="error-originMaxConcurrent">/);
      expect(response.text).toContain('value="-2"');
    });

    it("says a ceiling or reservation that is no whole number must be one", async () => {
      const llm = (await d.store.getPoolBySubdomain(d.acme.team.id, "llm"))!;
      const response = await d.request("/budget", {
        cookie: owner,
        form: {
          name: "Fractions",
          originMaxConcurrent: "1.5",
          [`member-${llm.id}`]: "on",
          [`reserved-${llm.id}`]: "0.5",
        },
      });
      expect(response.status).toBe(422);
      expect(response.text).toMatch(/id="error-originMaxConcurrent">Must be a whole number\.</);
      expect(response.text).toMatch(
        new RegExp(`id="error-reserved-${llm.id}">Must be a whole number\\.<`),
      );
      expect(response.text).not.toContain("Invalid type");
    });
  });

  describe("pools", () => {
    it("creates a pool with every field of the apply file, the credential write-only", async () => {
      const created = await d.request("/pool", {
        cookie: owner,
        form: poolForm({
          description: "Chat completions",
          rpm: "600",
          readMethods: "post",
          readPaths: "POST /v1/embeddings",
          originSigning: "on",
          budgetId: String(d.acme.budget.id),
          reservedConcurrent: "3",
          credentialHeader: "x-api-key",
          credentialValue: "sk-live-secret",
        }),
      });
      expect(created.status).toBe(303);
      expect(created.location).toBe("/pool/chat");
      const pool = (await d.store.getPoolBySubdomain(d.acme.team.id, "chat"))!;
      expect(pool).toMatchObject({
        description: "Chat completions",
        origin: "https://api.example.test",
        maxConcurrent: 6,
        queueSize: 10,
        queueTimeoutMs: 5000,
        rpm: 600,
        readMethods: ["POST"],
        readPaths: { POST: ["/v1/embeddings"] },
        originSigning: true,
        budgetId: d.acme.budget.id,
        reservedConcurrent: 3,
      });
      expect(d.catalog.decryptCredential(pool)).toEqual({
        header: "x-api-key",
        value: "sk-live-secret",
      });
      expect(d.governor.poolSettings("chat")?.maxConcurrent).toBe(6);
      const edit = await d.request("/pool/chat/edit", { cookie: owner });
      expect(edit.text).toContain("A credential is set (header x-api-key).");
      expect(edit.text).not.toContain("sk-live-secret");
      const detail = await d.request("/pool/chat", { cookie: owner });
      expect(detail.text).not.toContain("sk-live-secret");
    });

    it("checks the form with apply's schema: errors next to each field, the form kept", async () => {
      const response = await d.request("/pool", {
        cookie: owner,
        form: poolForm({
          subdomain: "Bad_Name",
          origin: "ftp://x",
          maxConcurrent: "",
          "queue.size": "many",
          readMethods: "TRACE",
          credentialValue: "secret-typed",
        }),
      });
      expect(response.status).toBe(422);
      expect(response.text).toMatch(/id="error-subdomain">Use 1-63 lower-case letters/);
      expect(response.text).toMatch(/id="error-origin">Must be an http:\/\/ or https:\/\/ URL\./);
      expect(response.text).toMatch(/id="error-maxConcurrent">Required\./);
      expect(response.text).toMatch(/id="error-queue.size">Must be a whole number\./);
      expect(response.text).not.toContain("Invalid type");
      const fraction = await d.request("/pool", {
        cookie: owner,
        form: poolForm({ subdomain: "fraction", maxConcurrent: "1.5", termMs: "2.5" }),
      });
      expect(fraction.status).toBe(422);
      expect(fraction.text).toMatch(/id="error-maxConcurrent">Must be a whole number\.</);
      expect(fraction.text).toMatch(/id="error-termMs">Must be a whole number\.</);
      expect(fraction.text).not.toContain("Invalid type");
      expect(response.text).toMatch(/id="error-readMethods">TRACE and CONNECT are never proxied/);
      expect(response.text).toContain('value="Bad_Name"');
      expect(response.text).not.toContain("secret-typed");
      const taken = await d.request("/pool", {
        cookie: owner,
        form: poolForm({ subdomain: "globex-llm" }),
      });
      expect(taken.status).toBe(409);
      const own = await d.request("/pool", {
        cookie: owner,
        form: poolForm({ subdomain: "open" }),
      });
      expect(own.status).toBe(422);
      expect(own.text).toContain("The team has a pool with this subdomain already.");
      const over = await d.request("/pool", {
        cookie: owner,
        form: poolForm({
          maxConcurrent: "8",
          budgetId: String(d.acme.budget.id),
          reservedConcurrent: "7",
        }),
      });
      expect(over.status).toBe(422);
      expect(over.text).toContain("its pools would reserve 11");
    });

    it("edits a pool in place: the governor keeps held slots and applies the new limit at once", async () => {
      const grant = await d.governor.acquire("open");
      const form = await d.request("/pool/open/edit", { cookie: owner });
      const version = /name="version" value="(\d+)"/.exec(form.text)![1]!;
      await d.clock.advance(1_000);
      const saved = await d.request("/pool/open/edit", {
        cookie: owner,
        form: poolForm({
          name: "Open",
          maxConcurrent: "5",
          requireKey: "",
          version,
          credentialAction: "keep",
        }),
      });
      expect(saved.status).toBe(303);
      const status = await d.governor.status("open");
      expect(status.settings.maxConcurrent).toBe(5);
      expect(status.held).toBe(1);
      await d.governor.release("open", grant.slotId);
    });

    it("refuses the later of two saves of one pool: changed since you opened it", async () => {
      const opened = await d.request("/pool/open/edit", { cookie: owner });
      const version = /name="version" value="(\d+)"/.exec(opened.text)![1]!;
      await d.clock.advance(1_000);
      const first = await d.request("/pool/open/edit", {
        cookie: owner,
        form: poolForm({ name: "First", version, credentialAction: "keep" }),
      });
      expect(first.status).toBe(303);
      await d.clock.advance(1_000);
      const second = await d.request("/pool/open/edit", {
        cookie: owner,
        form: poolForm({ name: "Second", version, credentialAction: "keep" }),
      });
      expect(second.status).toBe(409);
      expect(second.text).toContain(CHANGED_SINCE_OPENED.slice(0, 40));
      expect(second.text).toContain('value="Second"');
      expect((await d.store.getPoolBySubdomain(d.acme.team.id, "open"))?.name).toBe("First");
    });

    it("creates a postgres pool with its read role write-only, and keeps it on a later save", async () => {
      const missing = await d.request("/pool", {
        cookie: owner,
        form: poolForm({ subdomain: "warehouse", backend: "postgres", origin: "" }),
      });
      expect(missing.status).toBe(422);
      expect(missing.text).toMatch(/id="error-databaseConnection">Required for a postgres pool/);
      const wrongScheme = await d.request("/pool", {
        cookie: owner,
        form: poolForm({
          subdomain: "warehouse",
          backend: "postgres",
          databaseConnection: "mysql://x@y/z",
        }),
      });
      expect(wrongScheme.status).toBe(422);
      expect(wrongScheme.text).toMatch(
        /id="error-databaseConnection">Must be a postgres:\/\/ or postgresql:\/\/ URL\./,
      );
      expect(wrongScheme.text).not.toContain("mysql://x@y/z");
      const connection = "postgres://reader:s3cret@db.internal:5432/app";
      const created = await d.request("/pool", {
        cookie: owner,
        form: poolForm({
          subdomain: "warehouse",
          backend: "postgres",
          origin: "",
          databaseConnection: connection,
          "database.maxRows": "500",
        }),
      });
      expect(created.status).toBe(303);
      const pool = (await d.store.getPoolBySubdomain(d.acme.team.id, "warehouse"))!;
      expect(pool).toMatchObject({
        backend: "postgres",
        origin: "postgresql://db.internal:5432/app",
      });
      expect(pool.database?.maxRows).toBe(500);
      expect(d.catalog.decryptDatabaseUrl(pool)).toBe(connection);
      const edit = await d.request("/pool/warehouse/edit", { cookie: owner });
      expect(edit.text).not.toContain("s3cret");
      // Its page's curl line posts SQL to /sql, the only path a postgres pool answers.
      const detail = await d.request("/pool/warehouse", { cookie: owner });
      expect(detail.text).toContain(
        "curl -sS http://warehouse.pools.localhost:8080/sql -H &quot;X-Svc-Key: $SLUICE_KEY&quot;",
      );
      expect(detail.text).not.toContain("warehouse.pools.localhost:8080/&lt;path&gt;");
      await d.clock.advance(1_000);
      const saved = await d.request("/pool/warehouse/edit", {
        cookie: owner,
        form: poolForm({
          name: "Warehouse",
          backend: "postgres",
          origin: "",
          "database.maxRows": "900",
          version: String(pool.updatedAt),
          credentialAction: "keep",
        }),
      });
      expect(saved.status).toBe(303);
      const after = (await d.store.getPoolBySubdomain(d.acme.team.id, "warehouse"))!;
      expect(after.database?.maxRows).toBe(900);
      expect(d.catalog.decryptDatabaseUrl(after)).toBe(connection);
    });

    it("replaces and clears a credential; deletes a pool", async () => {
      const version = async () =>
        (await d.store.getPoolBySubdomain(d.acme.team.id, "open"))!.updatedAt.toString();
      await d.request("/pool/open/edit", {
        cookie: owner,
        form: poolForm({
          name: "Open",
          credentialAction: "replace",
          credentialValue: "v1-secret",
          version: await version(),
        }),
      });
      expect(
        d.catalog.decryptCredential((await d.store.getPoolBySubdomain(d.acme.team.id, "open"))!)
          ?.value,
      ).toBe("v1-secret");
      await d.clock.advance(1);
      const empty = await d.request("/pool/open/edit", {
        cookie: owner,
        form: poolForm({
          name: "Open",
          credentialAction: "replace",
          credentialValue: "",
          version: await version(),
        }),
      });
      expect(empty.status).toBe(422);
      expect(empty.text).toMatch(/id="error-credentialValue">Enter the new credential value/);
      await d.request("/pool/open/edit", {
        cookie: owner,
        form: poolForm({ name: "Open", credentialAction: "clear", version: await version() }),
      });
      expect((await d.store.getPoolBySubdomain(d.acme.team.id, "open"))?.credential).toBeNull();
      // One click is not enough: the form asks for the subdomain, and keeps the pool without it.
      for (const confirmDelete of [undefined, "", "llm", "Open"]) {
        const form: Record<string, string> = confirmDelete === undefined ? {} : { confirmDelete };
        const refused = await d.request("/pool/open/delete", { cookie: owner, form });
        expect(refused.status).toBe(422);
        expect(refused.text).toMatch(/id="error-confirmDelete">Type open to delete this pool\./);
        expect(await d.store.getPoolBySubdomain(d.acme.team.id, "open")).toBeDefined();
      }
      const deleted = await d.request("/pool/open/delete", {
        cookie: owner,
        form: { confirmDelete: "open" },
      });
      expect(deleted.status).toBe(303);
      expect(await d.store.getPoolBySubdomain(d.acme.team.id, "open")).toBeUndefined();
      expect(d.governor.poolSettings("open")).toBeUndefined();
    });
  });

  describe("pool detail", () => {
    it("shows live status, the chart's data, curl lines with real URLs, and the access log filtered by outcome", async () => {
      const grant = await d.governor.acquire("llm");
      await expect(
        d.governor.acquire("llm", { noQueue: true }).then(() => null),
      ).resolves.toBeNull();
      const logged = { at: d.clock.now(), keyId: null };
      d.accessLog.append(accessLogEntry({ ...logged, remoteAddress: "10.1.1.1" }));
      d.accessLog.append(
        accessLogEntry({
          ...logged,
          outcome: "rejected",
          reason: "concurrency",
          remoteAddress: "10.2.2.2",
          source: "proxy",
        }),
      );
      d.accessLog.append(
        accessLogEntry({
          ...logged,
          remoteAddress: "10.3.3.3",
          source: "proxy",
          upstreamStatus: 429,
        }),
      );
      const page = await d.request("/pool/llm", { cookie: owner });
      expect(page.status).toBe(200);
      expect(page.text).toMatch(/data-held="llm">2</);
      expect(page.text).toContain(
        "curl -sS -X POST http://localhost:8080/pools/llm/lock/acquire -H &quot;X-Svc-Key: $SLUICE_KEY&quot;",
      );
      expect(page.text).toContain("curl -sS http://llm.pools.localhost:8080/&lt;path&gt;");
      expect(page.text).toContain('data-series-url="/pool/llm/series?range=hour"');
      expect(page.text).toContain("10.1.1.1");
      // The upstream's answer to a proxied call is shown on its row.
      expect(page.text).toContain('<td>proxy</td><td class="num">429</td><td>10.3.3.3</td>');
      const rejected = await d.request("/pool/llm?outcome=rejected", { cookie: owner });
      expect(rejected.text).toContain("10.2.2.2");
      expect(rejected.text).not.toContain("10.1.1.1");
      const series = await d.request("/pool/llm/series?range=hour", { cookie: owner });
      const data = JSON.parse(series.text);
      expect(data.time.length).toBe(61);
      expect(data.requests.at(-1)).toBe(2);
      expect(data.admitted.at(-1)).toBe(2);
      const live = await d.request("/pool/llm/live", { cookie: owner });
      expect(live.text).toMatch(/data-held="llm">2</);
      await d.governor.release("llm", grant.slotId);
    });

    it("mints a key showing the plaintext once, lists it by its last four, and revokes it", async () => {
      const minted = await d.request("/pool/llm/keys", {
        cookie: owner,
        form: { label: "ci", access: "read", expires_preset: "24h" },
      });
      expect(minted.status).toBe(201);
      expect(minted.headers.get("cache-control")).toBe("no-store");
      const plaintext = /id="minted-key">(slc_key_[\w-]{43})</.exec(minted.text)![1]!;
      const [key] = await d.store.listPoolKeys(d.acme.llm.id);
      expect(key).toMatchObject({ label: "ci", access: "read", lastFour: plaintext.slice(-4) });
      expect(await d.catalog.verifyPoolKey("llm", plaintext)).not.toBeNull();
      const later = await d.request("/pool/llm", { cookie: owner });
      expect(later.text).not.toContain(plaintext);
      expect(later.text).toContain(`…${plaintext.slice(-4)}`);
      const revoked = await d.request(`/pool/llm/keys/${key!.id}/revoke`, {
        cookie: owner,
        form: {},
      });
      expect(revoked.status).toBe(303);
      expect(await d.catalog.verifyPoolKey("llm", plaintext)).toBeNull();
      const bad = await d.request("/pool/llm/keys", {
        cookie: owner,
        form: { label: "x".repeat(61), access: "read", expires_preset: "none" },
      });
      expect(bad.status).toBe(422);
      expect(bad.text).toMatch(/id="error-label">Must be at most 60 characters\./);
    });

    it("shows the signing secret once for a pool that signs origin requests", async () => {
      const version = String(d.acme.open.updatedAt);
      await d.request("/pool/open/edit", {
        cookie: owner,
        form: poolForm({ name: "Open", originSigning: "on", version, credentialAction: "keep" }),
      });
      const minted = await d.request("/pool/open/keys", {
        cookie: owner,
        form: { label: "", access: "write", expires_preset: "none" },
      });
      expect(minted.text).toMatch(/id="minted-signing-secret">slc_sig_/);
    });

    it("shows where the learner probes next and how often it failed there", async () => {
      const before = await d.request("/pool/llm/live", { cookie: owner });
      expect(before.text).not.toContain("Next probe");
      const first = await d.governor.acquire("llm");
      await d.governor.acquire("llm");
      await d.governor.acquire("llm");
      await d.governor.release("llm", first.slotId, { status: 429 });
      const learned = (await d.governor.status("llm")).learner;
      expect(learned.limit).toBeGreaterThan(0);
      const level = (learned.limit ?? 0) + 1;
      const live = await d.request("/pool/llm/live", { cookie: owner });
      expect(live.text).toMatch(new RegExp(`data-next-probe="true">to ${level} (now|in \\d+ s)`));
      expect(live.text).toContain(
        learned.failedProbes > 0
          ? `${learned.failedProbes} failed at this level`
          : "no failed probes",
      );
    });

    it("resets learned limits", async () => {
      const grant = await d.governor.acquire("llm");
      await d.governor.release("llm", grant.slotId, { status: 429, retryAfterMs: 60_000 });
      expect((await d.governor.status("llm")).learned.pausedUntil).toBeGreaterThan(d.clock.now());
      const reset = await d.request("/pool/llm/reset-learned", { cookie: owner, form: {} });
      expect(reset.status).toBe(303);
      expect((await d.governor.status("llm")).learned.pausedUntil).toBe(0);
    });
  });

  describe("API tokens", () => {
    it("creates a token with chosen abilities and expiry, shows it once, lists it and revokes it", async () => {
      const created = await d.request("/settings/tokens", {
        cookie: owner,
        form: { name: "CI", abilities: ["pools:read", "metrics:read"], lifetime: "6m" },
      });
      expect(created.status).toBe(201);
      const plaintext = /id="token-plaintext">(slc_tok_[\w-]{43})</.exec(created.text)![1]!;
      const auth = await d.catalog.authenticateApiToken(plaintext);
      expect(auth.abilities).toEqual(["pools:read", "metrics:read"]);
      expect(auth.user.id).toBe(d.acme.owner.id);
      expect(new Date(auth.token.expiresAt).toISOString()).toBe("2030-07-15T12:00:00.000Z");
      const list = await d.request("/settings/tokens", { cookie: member });
      expect(list.text).toContain("pools:read, metrics:read");
      expect(list.text).not.toContain(plaintext);
      expect(list.text).not.toContain("Create a token");
      const revoked = await d.request(`/settings/tokens/${auth.token.id}/revoke`, {
        cookie: owner,
        form: {},
      });
      expect(revoked.status).toBe(303);
      await expect(d.catalog.authenticateApiToken(plaintext)).rejects.toThrow("revoked");
      const none = await d.request("/settings/tokens", {
        cookie: owner,
        form: { name: "x", lifetime: "2y" },
      });
      expect(none.status).toBe(422);
      expect(none.text).toMatch(/id="error-abilities">Choose at least one ability\./);
      expect(none.text).toMatch(/id="error-lifetime">/);
    });
  });

  describe("members", () => {
    it("adds a member, changes a role, and removes someone, ending their sessions and tokens", async () => {
      const added = await d.request("/settings/members", {
        cookie: owner,
        form: { name: "Di", email: "di@acme.test", role: "member" },
      });
      expect(added.status).toBe(303);
      const di = (await d.store.findUserByEmail("di@acme.test"))!;
      expect((await d.store.getMembership(d.acme.team.id, di.id))?.role).toBe("member");
      const again = await d.request("/settings/members", {
        cookie: owner,
        form: { name: "Di", email: "di@acme.test", role: "admin" },
      });
      expect(again.status).toBe(409);
      const bo = await d.signInAs(d.acme.admin.id);
      const token = (
        await d.catalog.createApiToken({
          teamId: d.acme.team.id,
          actorUserId: d.acme.admin.id,
          name: "bo",
          abilities: ["pools:read"],
          lifetime: "1y",
        })
      ).plaintext;
      const demoted = await d.request(`/settings/members/${d.acme.admin.id}/role`, {
        cookie: owner,
        form: { role: "member" },
      });
      expect(demoted.status).toBe(303);
      expect((await d.request("/", { cookie: bo })).status).toBe(303);
      await expect(d.catalog.authenticateApiToken(token)).rejects.toThrow();
      const cy = member;
      const removed = await d.request(`/settings/members/${d.acme.member.id}/remove`, {
        cookie: owner,
        form: {},
      });
      expect(removed.status).toBe(303);
      expect((await d.request("/", { cookie: cy })).status).toBe(303);
      expect(await d.store.getMembership(d.acme.team.id, d.acme.member.id)).toBeUndefined();
    });

    it("keeps the last owner and lets an admin not make owners", async () => {
      const last = await d.request(`/settings/members/${d.acme.owner.id}/remove`, {
        cookie: owner,
        form: {},
      });
      expect(last.status).toBe(422);
      expect(last.text).toContain("last owner cannot be removed");
      // A refused change is shown in the row of the member it was about, not under the list.
      const ownerRow = (page: string) =>
        page.match(new RegExp(`<tr data-user-id="${d.acme.owner.id}">.*?</tr>`))?.[0] ?? "";
      expect(ownerRow(last.text)).toContain("last owner cannot be removed");
      const demote = await d.request(`/settings/members/${d.acme.owner.id}/role`, {
        cookie: owner,
        form: { role: "admin" },
      });
      expect(demote.status).toBe(422);
      expect(ownerRow(demote.text)).toContain("last owner cannot step down");
      const admin = await d.signInAs(d.acme.admin.id);
      // An admin is offered no owner controls: no "owner" option, nothing in an owner's row.
      const asAdmin = await d.request("/settings/members", { cookie: admin });
      expect(asAdmin.text).not.toContain('<option value="owner"');
      expect(asAdmin.text).not.toContain(`action="/settings/members/${d.acme.owner.id}/`);
      expect(asAdmin.text).toContain(`action="/settings/members/${d.acme.member.id}/role"`);
      expect((await d.request("/settings/members", { cookie: owner })).text).toContain(
        '<option value="owner"',
      );
      // The add form's role error is next to its role field, inside that form.
      const addOwner = await d.request("/settings/members", {
        cookie: admin,
        form: { name: "Ed", email: "ed@acme.test", role: "owner" },
      });
      expect(addOwner.status).toBe(422);
      expect(addOwner.text).toMatch(
        /<form class="stack" method="post" action="\/settings\/members">(?:(?!<\/form>).)*id="error-role">Only an owner may make someone owner\./,
      );
      const promote = await d.request(`/settings/members/${d.acme.member.id}/role`, {
        cookie: admin,
        form: { role: "owner" },
      });
      expect(promote.status).toBe(403);
      expect((await d.store.getMembership(d.acme.team.id, d.acme.member.id))?.role).toBe("member");
    });
  });

  describe("refusals", () => {
    const writes: [string, (d: DashboardHarness) => Record<string, string>][] = [
      ["/budget", () => ({ name: "X", originMaxConcurrent: "" })],
      ["/budget/BUDGET", () => ({ name: "X" })],
      ["/budget/BUDGET/delete", () => ({})],
      ["/pool", () => poolForm({ subdomain: "members-pool" })],
      ["/pool/llm/edit", () => poolForm({ name: "Renamed" })],
      ["/pool/llm/delete", () => ({})],
      ["/pool/llm/keys", () => ({ label: "m" })],
      ["/pool/llm/keys/1/revoke", () => ({})],
      ["/pool/llm/reset-learned", () => ({})],
      ["/settings/tokens", () => ({ name: "m", abilities: "pools:read", lifetime: "1y" })],
      ["/settings/tokens/1/revoke", () => ({})],
      ["/settings/members", () => ({ name: "M", email: "m@acme.test", role: "owner" })],
      ["/settings/members/1/role", () => ({ role: "owner" })],
      ["/settings/members/1/remove", () => ({})],
    ];

    it.each(writes)(
      "a member's POST %s is refused with 403 and changes nothing",
      async (path, form) => {
        const before = JSON.stringify([
          await d.store.listPools(d.acme.team.id),
          await d.store.listBudgets(d.acme.team.id),
          await d.store.listMemberships(d.acme.team.id),
        ]);
        const response = await d.request(path.replace("BUDGET", String(d.acme.budget.id)), {
          cookie: member,
          form: form(d),
        });
        expect(response.status).toBe(403);
        expect(response.text).toContain(
          "Members can see everything of their team but change nothing.",
        );
        expect(
          JSON.stringify([
            await d.store.listPools(d.acme.team.id),
            await d.store.listBudgets(d.acme.team.id),
            await d.store.listMemberships(d.acme.team.id),
          ]),
        ).toBe(before);
      },
    );

    it.each(["/budget/new", "/pool/new", "/budget/BUDGET/edit", "/pool/llm/edit"])(
      "a member opening %s gets the 403 page, not a form they cannot submit",
      async (template) => {
        const path = template.replace("BUDGET", String(d.acme.budget.id));
        const response = await d.request(path, { cookie: member });
        expect(response.status).toBe(403);
        expect(response.text).toContain(
          "Members can see everything of their team but change nothing.",
        );
        expect(response.text).not.toContain('<form class="stack"');
        expect(response.text).not.toMatch(/action="\/(budget|pool)/);
        expect((await d.request(path, { cookie: owner })).status).toBe(200);
      },
    );

    it("answers 404 for another team's pools, keys, budgets, tokens and members", async () => {
      const gus = await d.signInAs(d.globex.owner.id, d.globex.team.id);
      const token = await d.catalog.createApiToken({
        teamId: d.acme.team.id,
        actorUserId: d.acme.owner.id,
        name: "acme",
        abilities: ["pools:read"],
        lifetime: "1y",
      });
      const key = await d.catalog.mintPoolKey({ teamId: d.acme.team.id, subdomain: "llm" });
      for (const path of [
        "/pool/llm",
        "/pool/llm/edit",
        "/pool/llm/live",
        "/pool/llm/series",
        `/budget/${d.acme.budget.id}/edit`,
      ]) {
        expect((await d.request(path, { cookie: gus })).status, path).toBe(404);
      }
      const posts = [
        "/pool/llm/edit",
        "/pool/llm/delete",
        "/pool/llm/keys",
        `/pool/llm/keys/${key.key.id}/revoke`,
        "/pool/llm/reset-learned",
        `/budget/${d.acme.budget.id}`,
        `/budget/${d.acme.budget.id}/delete`,
        `/settings/tokens/${token.token.id}/revoke`,
        `/settings/members/${d.acme.owner.id}/role`,
        `/settings/members/${d.acme.owner.id}/remove`,
      ];
      for (const path of posts) {
        expect(
          (await d.request(path, { cookie: gus, form: { role: "member", name: "x" } })).status,
          path,
        ).toBe(404);
      }
      expect(await d.catalog.verifyPoolKey("llm", key.plaintext)).not.toBeNull();
      expect((await d.store.getPoolBySubdomain(d.acme.team.id, "llm"))?.name).toBe("LLM");
      expect((await d.request("/", { cookie: gus })).text).not.toContain("LLM");
    });

    it("answers an unknown page with a 404 page and never a stack trace", async () => {
      const response = await d.request("/nothing/here", { cookie: owner });
      expect(response.status).toBe(404);
      expect(response.text).toContain("Nothing here");
      const junk = await d.request("/pool/llm/keys/abc/revoke", { cookie: owner, form: {} });
      expect(junk.status).toBe(404);
    });
  });
});
