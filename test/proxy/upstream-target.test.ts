import { describe, expect, it } from "vitest";
import { parseOrigin } from "../../adapters/hono/proxy/upstream-target.js";
import { InvalidArgumentError } from "../../src/errors.js";

describe("parseOrigin", () => {
  it("splits an origin URL into what the connection pool is keyed by and a base path", () => {
    expect(parseOrigin("https://api.example.test/v2/")).toEqual({
      origin: "https://api.example.test",
      basePath: "/v2",
    });
    expect(parseOrigin("http://127.0.0.1:9000")).toEqual({
      origin: "http://127.0.0.1:9000",
      basePath: "",
    });
  });

  it("refuses what is no http(s) URL with a typed error", () => {
    expect(() => parseOrigin("ftp://files.example.test")).toThrow(InvalidArgumentError);
    expect(() => parseOrigin("ftp://files.example.test")).toThrow(/got ftp:/);
    expect(() => parseOrigin("not a url")).toThrow(InvalidArgumentError);
  });
});
