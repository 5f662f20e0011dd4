import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bodyText,
  contentType,
  extraHeaders,
  method,
  oddNumberText,
  queryString,
  rawJsonObject,
} from "./arbitraries.js";
import { describeRequest, expectContractAnswer, faultLines, fuzzOptions } from "./contract.js";
import { type FuzzServer, type RawRequest, rawRequest, startFuzzServer } from "./harness.js";

let env: FuzzServer;
beforeAll(async () => {
  env = await startFuzzServer();
});
afterAll(() => env?.close());
const formValue = fc.oneof(
  oddNumberText,
  fc.constantFrom(
    "",
    "%ZZ",
    "%00",
    "authorization_code",
    "refresh_token",
    "client_credentials",
    "S256",
    "plain",
    "x".repeat(5_000),
  ),
  fc.string({ maxLength: 16, unit: "binary" }).map(encodeURIComponent),
  fc.webUrl().map(encodeURIComponent),
);

/** A form body (`application/x-www-form-urlencoded`) over `names`, with duplicates and bad encoding. */
function formBody(names: readonly string[]): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 6 })), formValue), {
      maxLength: 7,
    })
    .map((pairs) => pairs.map(([name, value]) => `${encodeURIComponent(name)}=${value}`).join("&"));
}

const REGISTER_FIELDS = [
  "redirect_uris",
  "client_name",
  "grant_types",
  "response_types",
  "token_endpoint_auth_method",
  "scope",
  "client_uri",
  "logo_uri",
  "software_id",
  "contacts",
];
const redirectUris = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "http://127.0.0.1:9/cb",
        "https://app.example/cb",
        "not a url",
        "http://[::1",
        "javascript:alert(1)",
        "http://127.0.0.1/\u0000",
        "",
        "https://a.example/cb#frag",
      ),
      fc.webUrl(),
    ),
    { maxLength: 3 },
  )
  .map((uris) => `{"redirect_uris":${JSON.stringify(uris)}`);
const registerBody = fc.oneof(
  bodyText(REGISTER_FIELDS),
  fc
    .tuple(redirectUris, rawJsonObject(REGISTER_FIELDS))
    .map(([head, rest]) => (rest === "{}" ? `${head}}` : `${head},${rest.slice(1)}`)),
);

const oauthPost = fc
  .record({
    endpoint: fc.constantFrom("/oauth/token", "/oauth/revoke", "/oauth/register"),
    method: fc.oneof(
      { weight: 5, arbitrary: fc.constant("POST") },
      { weight: 1, arbitrary: method },
    ),
    tokenForm: formBody([
      "grant_type",
      "code",
      "code_verifier",
      "redirect_uri",
      "client_id",
      "refresh_token",
      "resource",
      "scope",
      "token",
      "token_type_hint",
    ]),
    registerBody,
    contentType,
    formType: fc.boolean(),
    headers: extraHeaders,
  })
  .map((r): RawRequest => {
    const body = r.endpoint === "/oauth/register" ? r.registerBody : r.tokenForm;
    const headers: Record<string, string | string[]> = { ...r.headers };
    const type = r.formType
      ? r.endpoint === "/oauth/register"
        ? "application/json"
        : "application/x-www-form-urlencoded"
      : r.contentType;
    if (type !== undefined) headers["content-type"] = type;
    const sendsBody = r.method !== "GET" && r.method !== "HEAD";
    return { method: r.method, path: r.endpoint, headers, body: sendsBody ? body : undefined };
  });

const AUTHORIZE_PARAMS = [
  "response_type",
  "client_id",
  "redirect_uri",
  "code_challenge",
  "code_challenge_method",
  "state",
  "resource",
  "scope",
];
const authorizeRequest = fc
  .record({
    query: queryString(AUTHORIZE_PARAMS),
    signedIn: fc.boolean(),
    answer: fc.boolean(),
    form: formBody(["ticket", "decision"]),
    contentType: fc.constantFrom(
      "application/x-www-form-urlencoded",
      "multipart/form-data",
      "application/json",
    ),
  })
  .map((r): RawRequest => {
    const headers: Record<string, string> = { origin: env.baseUrl };
    if (r.signedIn) headers.cookie = env.cookie;
    if (!r.answer) return { method: "GET", path: `/oauth/authorize${r.query}`, headers };
    headers["content-type"] = r.contentType;
    return { method: "POST", path: "/oauth/authorize", headers, body: r.form };
  });

describe("OAuth endpoints under malformed input (property, real socket)", () => {
  it("token, revoke and register: no 5xx, {error} on every refusal", async () => {
    await fc.assert(
      fc.asyncProperty(oauthPost, async (request) => {
        expectContractAnswer(request, await rawRequest(env.port, request), "oauth");
      }),
      fuzzOptions(400, 20261127),
    );
  });

  it("authorize (the page and the consent answer): no 5xx, signed in or not", async () => {
    await fc.assert(
      fc.asyncProperty(authorizeRequest, async (request) => {
        const answer = await rawRequest(env.port, request);
        expectContractAnswer(request, answer, "any");
        // A refusal never sends the browser to a redirect URI it was not registered with.
        const location = answer.headers.location;
        if (typeof location === "string" && answer.status >= 300 && answer.status < 400) {
          expect(location, describeRequest(request)).toMatch(
            /^(\/sign-in|http:\/\/127\.0\.0\.1:9\/callback)/,
          );
        }
      }),
      fuzzOptions(300, 20261127),
    );
  });

  it("logged no fault while answering all of it", () => {
    expect(faultLines(env.logs)).toEqual([]);
  });
});
