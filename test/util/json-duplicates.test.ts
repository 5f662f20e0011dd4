import { describe, expect, it } from "vitest";
import { duplicateJsonKeys } from "../../src/util/json-duplicates.js";

describe("duplicateJsonKeys", () => {
  it("names each repeated key by its path, in arrays and nested objects alike", () => {
    const text =
      '{"a":1,"pools":[{"x":{"sub":[1],"b\\"c":"{,}","sub":[2]}},{"x":1,"y":2,"x":3}],"a":2}';
    expect(duplicateJsonKeys(text)).toEqual(["pools.0.x.sub", "pools.1.x", "a"]);
  });

  it("finds none in keys that only look alike, strings holding braces, or escapes", () => {
    expect(
      duplicateJsonKeys('{"sub":"\\"sub\\":", "Sub":["{\\"sub\\":1}"], "s\\u0075b2": 1}'),
    ).toEqual([]);
    // An escaped and a plain spelling of one name are the same key to JSON.parse.
    expect(duplicateJsonKeys('{"sub":1,"s\\u0075b":2}')).toEqual(["sub"]);
  });

  it("walks any depth without recursion", () => {
    const deep = `${"[".repeat(100_000)}{"a":1,"a":2}${"]".repeat(100_000)}`;
    expect(duplicateJsonKeys(deep)).toHaveLength(1);
  });
});
