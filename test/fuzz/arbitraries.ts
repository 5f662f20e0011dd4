import fc from "fast-check";

/**
 * Generators of hostile input for the fuzz tests: path segments, query strings, JSON bodies
 * (raw text, so `1e309` and `NaN` reach the parser as sent), content types, methods and
 * headers. Each keeps sizes bounded so a run stays fast on a two-core machine.
 *
 * @example
 * ```ts
 * fc.sample(pathSegment, 3); // e.g. ["%ZZ", "1e309", "%C3%A9t%C3%A9"]
 * ```
 */
export const pathSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "1",
    "0",
    "-1",
    "1.5",
    "1e309",
    "NaN",
    "Infinity",
    "99999999999999999999999",
    "9007199254740993",
    "0x10",
    "%ZZ",
    "%",
    "%E0%A4%A",
    "%00",
    "%2F",
    "%2e%2e",
    "..",
    "%20",
    "%FF%FE",
    "null",
    "__proto__",
    "constructor",
  ),
  fc.string({ maxLength: 12, unit: "binary" }).map(encodeURIComponent),
  fc.string({ minLength: 1, maxLength: 8 }).filter((text) => /^[A-Za-z0-9._~-]+$/.test(text)),
  fc.integer({ min: 200, max: 3000 }).map((length) => "a".repeat(length)),
);

/** Raw number text a JSON body or query may carry: out of range, negative, fractional. */
export const oddNumberText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("1e309", "-1e309", "NaN", "-0", "1.5", "-1", "0", "9007199254740993", "1e-400"),
  fc.double({ noNaN: true }).map(String),
  fc.integer().map(String),
);

/** One query parameter value, percent-encoded or deliberately not. */
const queryValue: fc.Arbitrary<string> = fc.oneof(
  oddNumberText.map(encodeURIComponent),
  fc.constantFrom("%ZZ", "%", "%E0%A4%A", "%00", "", "+02:00", "2030-13-45T00:00:00Z", "now"),
  fc.string({ maxLength: 16, unit: "binary" }).map(encodeURIComponent),
  fc.date({ noInvalidDate: true }).map((date) => encodeURIComponent(date.toISOString())),
);

/** A query string (`?…` or empty), with duplicate names among `names`. */
export function queryString(names: readonly string[]): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...names), pathSegment), queryValue), {
      maxLength: 5,
    })
    .map((pairs) => (pairs.length === 0 ? "" : `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}`));
}

/** A JSON value as raw text, including numbers JSON.stringify cannot write. */
export const rawJsonValue: fc.Arbitrary<string> = fc.oneof(
  oddNumberText,
  fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)),
  fc.constantFrom('"\\u0000"', '"\\ud800"', '"\\u202e"', `"${"x".repeat(5000)}"`, "[]", "{}"),
);

/** A JSON object as raw text whose fields come from `fields` (or not), with odd values. */
export function rawJsonObject(fields: readonly string[]): fc.Arbitrary<string> {
  return fc
    .array(
      fc.tuple(fc.oneof(fc.constantFrom(...fields), fc.string({ maxLength: 8 })), rawJsonValue),
      {
        maxLength: 5,
      },
    )
    .map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`);
}

/** A request body: valid-looking objects, any JSON, deep nesting, truncation, garbage, huge. */
export function bodyText(fields: readonly string[]): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 4, arbitrary: rawJsonObject(fields) },
    { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 100, max: 20_000 })
        .map((depth) => "[".repeat(depth) + "]".repeat(depth)),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 100, max: 5_000 })
        .map((depth) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`),
    },
    { weight: 1, arbitrary: rawJsonObject(fields).map((text) => text.slice(0, -1)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        "{",
        "null",
        "[]",
        "\u0000",
        "\xff\xfe{}",
        "a=1&b=%ZZ",
        '{"a":1}{"b":2}',
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 64, unit: "binary" }) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1, max: 2 }).map((mib) => `"${"x".repeat(mib * 1024 * 1024)}"`),
    },
  );
}

/** Content types a careless or hostile client sends. */
export const contentType: fc.Arbitrary<string | undefined> = fc.constantFrom(
  undefined,
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  "APPLICATION/JSON",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/merge-patch+json",
  "*/*",
  "",
  "garbage",
);

/** Methods, common and not. */
export const method: fc.Arbitrary<string> = fc.constantFrom(
  "GET",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
  "HEAD",
  "PROPFIND",
  "TRACE",
);

/** Extra headers: huge, odd and duplicated values (only what node's client will send). */
export const extraHeaders: fc.Arbitrary<Record<string, string | string[]>> = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        "x-fuzz",
        "accept",
        "accept-encoding",
        "x-forwarded-for",
        "origin",
        "cookie",
        "if-none-match",
        "range",
      ),
      fc.oneof(
        fc.string({ maxLength: 20 }).filter((text) => /^[\t\x20-\x7e]*$/.test(text)),
        fc.integer({ min: 1000, max: 12_000 }).map((length) => "h".repeat(length)),
        fc.constantFrom("*/*", "bytes=0-1,5-", "999.999.999.999", "null", "\t"),
      ),
    ),
    { maxLength: 3 },
  )
  .map((pairs) => Object.fromEntries(pairs));
