import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extraHeaders, method, oddNumberText, pathSegment, queryString } from "./arbitraries.js";
import { describeRequest, expectContractAnswer, faultLines, fuzzOptions } from "./contract.js";
import { type FuzzServer, type RawRequest, rawRequest, startFuzzServer } from "./harness.js";

let env: FuzzServer;
beforeAll(async () => {
  env = await startFuzzServer();
});
afterAll(() => env?.close());

/** Pages whose POST forms are fuzzed (not sign-out, password or deletions: they end the run's state). */
const FORM_PAGES = [
  "/pool/new",
  "/pool/chat/edit",
  "/pool/chat",
  "/budget/new",
  "/budget/1/edit",
  "/settings/members",
  "/settings/tokens",
];
const DESTRUCTIVE = /sign-out|delete|remove|revoke|password|reset-learned|\/role$/;

interface Form {
  action: string;
  fields: [string, string][];
}

/** The POST forms of a page as a browser would submit them (first option of each select). */
function formsOf(html: string, page: string): Form[] {
  const forms: Form[] = [];
  for (const match of html.matchAll(/<form([^>]*)>([\s\S]*?)<\/form>/g)) {
    const attributes = match[1] as string;
    if (!/method="post"/i.test(attributes)) continue;
    const action = /action="([^"]*)"/.exec(attributes)?.[1] ?? page;
    if (DESTRUCTIVE.test(action)) continue;
    const fields: [string, string][] = [];
    const inner = match[2] as string;
    for (const input of inner.matchAll(/<(input|textarea)([^>]*)>/g)) {
      const name = /name="([^"]*)"/.exec(input[2] as string)?.[1];
      if (!name) continue;
      const type = /type="([^"]*)"/.exec(input[2] as string)?.[1];
      if ((type === "checkbox" || type === "radio") && !/checked/.test(input[2] as string))
        continue;
      const value = /value="([^"]*)"/.exec(input[2] as string)?.[1] ?? "";
      fields.push([name, value.replaceAll("&quot;", '"').replaceAll("&amp;", "&")]);
    }
    for (const select of inner.matchAll(
      /<select[^>]*name="([^"]*)"[^>]*>[\s\S]*?<option[^>]*value="([^"]*)"/g,
    )) {
      fields.push([select[1] as string, select[2] as string]);
    }
    forms.push({ action, fields });
  }
  return forms;
}

/** Valid values for the empty fields of the "new" forms, so mutations hit one field at a time. */
let serial = 0;
function filled(name: string, value: string): string {
  if (value !== "") return value;
  serial += 1;
  const defaults: Record<string, string> = {
    name: `Fuzz ${serial}`,
    subdomain: `fuzz-${serial}`,
    origin: "http://127.0.0.1:9",
    maxConcurrent: "2",
    originMaxConcurrent: "10",
    email: `fuzz${serial}@acme.test`,
  };
  return defaults[name] ?? value;
}

const junkValue = fc.oneof(
  oddNumberText,
  fc.constantFrom(
    "",
    " ",
    "%ZZ",
    "\u0000",
    "\u202e\u200b",
    "x".repeat(5_000),
    "__proto__",
    "http://[::1",
    "javascript:alert(1)",
    "GET\nDELETE",
    "/v1/*\n/v1/../x",
    "on",
    "owner",
    "2030-13-45",
  ),
  fc.string({ maxLength: 20, unit: "binary" }),
);

const formMutation = fc.record({
  page: fc.constantFrom(...FORM_PAGES),
  form: fc.nat(),
  changes: fc.array(fc.tuple(fc.nat(), fc.oneof(junkValue, fc.constant(null))), {
    minLength: 1,
    maxLength: 3,
  }),
  duplicate: fc.boolean(),
  session: fc.constantFrom(
    "signed-in",
    "signed-in",
    "signed-in",
    "signed-in",
    "none",
    "foreign-origin",
    "no-origin",
  ),
  contentType: fc.constantFrom(
    "application/x-www-form-urlencoded",
    "application/x-www-form-urlencoded",
    "application/x-www-form-urlencoded; charset=latin1",
    "multipart/form-data; boundary=x",
    "application/json",
  ),
  rawPercent: fc.boolean(),
});

describe("Dashboard under malformed input (property, real socket)", () => {
  it("answers every form post with no 5xx, and a 422 shows its error on the page", async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(formMutation, async (m) => {
        const page = await rawRequest(env.port, {
          method: "GET",
          path: m.page,
          headers: { cookie: env.cookie },
        });
        const forms = formsOf(page.text, m.page);
        if (forms.length === 0) return;
        const form = forms[m.form % forms.length] as Form;
        const fields = form.fields.map(([name, value]): [string, string | null] => [
          name,
          filled(name, value),
        ]);
        for (const [index, value] of m.changes) {
          if (fields.length > 0)
            (fields[index % fields.length] as [string, string | null])[1] = value;
        }
        const params = new URLSearchParams();
        for (const [name, value] of fields) {
          if (value === null) continue;
          params.append(name, value);
          if (m.duplicate) params.append(name, `${value}1`);
        }
        const body = m.rawPercent ? `${params.toString()}&bad=%ZZ%E0%A4%A` : params.toString();
        const headers: Record<string, string> = { "content-type": m.contentType };
        if (m.session !== "none") headers.cookie = env.cookie;
        if (m.session === "signed-in" || m.session === "none") headers.origin = env.baseUrl;
        if (m.session === "foreign-origin") headers.origin = "https://evil.example";
        const request: RawRequest = { method: "POST", path: form.action, headers, body };
        const answer = await rawRequest(env.port, request);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        expectContractAnswer(request, answer, "any");
        if (answer.status === 422) {
          const what = `${describeRequest(request)} → 422 without a visible error`;
          expect(answer.text, what).toMatch(/class="field-error"|class="notice bad( error)?"/);
        }
      }),
      fuzzOptions(250, 20261127),
    );
    expect(statuses.get(422) ?? 0).toBeGreaterThan(20);
    expect((statuses.get(303) ?? 0) + (statuses.get(200) ?? 0)).toBeGreaterThan(10);
  });

  /** Ids that are no real row, so a deletion route runs its lookup and refuses. */
  const junkId = pathSegment.filter(
    (segment) => !/^\d+$/.test(segment) && !/^(\.|%2e){1,2}$/i.test(segment),
  );

  it("answers destructive routes and pages with odd ids, queries and methods with no 5xx", async () => {
    const routes = [
      "/pool/{id}",
      "/pool/{id}/edit",
      "/pool/{id}/delete",
      "/pool/{id}/keys",
      "/pool/chat/keys/{id}/revoke",
      "/pool/{id}/reset-learned",
      "/pool/chat/series",
      "/pool/chat/live",
      "/pool/{id}/series",
      "/budget/{id}/edit",
      "/budget/{id}/delete",
      "/settings/members/{id}/role",
      "/settings/members/{id}/remove",
      "/settings/tokens/{id}/revoke",
      "/connected-apps/{id}/revoke",
      "/oauth/connected-apps/{id}/revoke",
      "/live/overview",
      "/",
      "/sign-in",
      "/sign-in/link",
      "/setup",
      "/account",
      "/account/team",
    ];
    const request = fc
      .record({
        route: fc.constantFrom(...routes),
        id: junkId,
        query: queryString([
          "window",
          "from",
          "to",
          "metric",
          "page",
          "before",
          "return_to",
          "token",
          "team",
        ]),
        method: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom("GET", "POST") },
          { weight: 1, arbitrary: method },
        ),
        signedIn: fc.boolean(),
        headers: extraHeaders,
        body: fc.oneof(
          junkValue.map((value) => `x=${encodeURIComponent(value)}`),
          fc.constantFrom("team=1e309", "role=%ZZ", "token=%00"),
        ),
      })
      .map((r): RawRequest => {
        const headers: Record<string, string | string[]> = {
          ...r.headers,
          "content-type": "application/x-www-form-urlencoded",
          origin: env.baseUrl,
        };
        if (r.signedIn) headers.cookie = env.cookie;
        const sendsBody = r.method !== "GET" && r.method !== "HEAD";
        return {
          method: r.method,
          path: r.route.replace("{id}", r.id) + r.query,
          headers,
          body: sendsBody ? r.body : undefined,
        };
      });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        expectContractAnswer(r, await rawRequest(env.port, r), "any");
      }),
      fuzzOptions(300, 20261127),
    );
    // The session survived all of it: the dashboard still serves the signed-in overview.
    const overview = await rawRequest(env.port, {
      method: "GET",
      path: "/",
      headers: { cookie: env.cookie },
    });
    expect(overview.status).toBe(200);
  });

  it("logged no fault while answering all of it", () => {
    expect(faultLines(env.logs)).toEqual([]);
  });
});
