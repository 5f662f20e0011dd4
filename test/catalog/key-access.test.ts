import { describe, expect, it } from "vitest";
import { allowedMethodsFor, keyAllowsMethod, readPathsFor } from "../../src/catalog/key-access.js";
import type { PoolRecord } from "../../src/catalog/types.js";

type AccessPool = Pick<PoolRecord, "backend" | "readMethods" | "readPaths">;
const plainPool: AccessPool = { backend: "http", readMethods: [], readPaths: null };
const read = { access: "read" as const };
const write = { access: "write" as const };

describe("keyAllowsMethod", () => {
  it("lets a write key use every method", () => {
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "PROPFIND"]) {
      expect(keyAllowsMethod(plainPool, write, method, "/anything")).toBe(true);
    }
  });

  it("lets a read key use GET, HEAD and OPTIONS only, in any case", () => {
    for (const method of ["GET", "HEAD", "OPTIONS", "get", "options"]) {
      expect(keyAllowsMethod(plainPool, read, method, "/v1/models"), method).toBe(true);
    }
    for (const method of ["POST", "PUT", "PATCH", "DELETE", "post"]) {
      expect(keyAllowsMethod(plainPool, read, method, "/v1/models"), method).toBe(false);
    }
  });

  it("adds the pool's read methods, anywhere when unscoped", () => {
    const pool: AccessPool = { backend: "http", readMethods: ["POST", "QUERY"], readPaths: null };
    expect(keyAllowsMethod(pool, read, "post", "/v1/chat")).toBe(true);
    expect(keyAllowsMethod(pool, read, "QUERY", "/x")).toBe(true);
    expect(keyAllowsMethod(pool, read, "DELETE", "/v1/chat")).toBe(false);
  });

  it("confines scoped read methods to whole-segment path prefixes", () => {
    const pool: AccessPool = {
      backend: "http",
      readMethods: ["POST", "QUERY"],
      readPaths: { POST: ["/v1/search", "/v1/embeddings/"] },
    };
    const allowed = (path: string) => keyAllowsMethod(pool, read, "POST", path);
    expect(allowed("/v1/search")).toBe(true);
    expect(allowed("/v1/search/deep")).toBe(true);
    expect(allowed("/v1/embeddings/")).toBe(true);
    expect(allowed("/v1/embeddings/x")).toBe(true);
    expect(allowed("/v1/searchx")).toBe(false);
    expect(allowed("/v1/chat")).toBe(false);
    expect(allowed("/v1/search/../admin")).toBe(false);
    expect(allowed("/v1/search/%2e%2E/admin")).toBe(false);
    expect(allowed("/v1/search%2Fadmin")).toBe(false);
    // Dot segments with servlet path parameters, half-encoded, and encoded backslashes.
    expect(allowed("/v1/search/..;/admin")).toBe(false);
    expect(allowed("/v1/search/.%2e;x/admin")).toBe(false);
    expect(allowed("/v1/search/..%3B/admin")).toBe(false);
    expect(allowed("/v1/search%5Cadmin")).toBe(false);
    // An encoded dot inside a name climbs nowhere.
    expect(allowed("/v1/search/report%2Etxt")).toBe(true);
    // QUERY has no entry in readPaths: it is an unscoped read method.
    expect(keyAllowsMethod(pool, read, "QUERY", "/v1/chat")).toBe(true);
    // GET is always a read, whatever the scoping.
    expect(keyAllowsMethod(pool, read, "GET", "/v1/chat")).toBe(true);
  });

  it("admits nothing for a read method scoped to no prefixes", () => {
    const pool: AccessPool = { backend: "http", readMethods: ["POST"], readPaths: { POST: [] } };
    expect(keyAllowsMethod(pool, read, "POST", "/")).toBe(false);
  });

  it("does not apply method scope on a postgres pool", () => {
    const pool: AccessPool = { backend: "postgres", readMethods: [], readPaths: null };
    for (const method of ["POST", "DELETE", "GET"]) {
      expect(keyAllowsMethod(pool, read, method, "/query")).toBe(true);
    }
  });
});

describe("allowedMethodsFor and readPathsFor", () => {
  it("lists the methods a key admits", () => {
    const pool: AccessPool = { backend: "http", readMethods: ["post", "QUERY"], readPaths: null };
    expect(allowedMethodsFor(pool, read)).toEqual(["GET", "HEAD", "OPTIONS", "POST", "QUERY"]);
    expect(allowedMethodsFor(plainPool, read)).toEqual(["GET", "HEAD", "OPTIONS"]);
    expect(allowedMethodsFor(plainPool, write)).toEqual([
      "GET",
      "HEAD",
      "OPTIONS",
      "POST",
      "PUT",
      "PATCH",
      "DELETE",
    ]);
    expect(allowedMethodsFor({ ...plainPool, backend: "postgres" }, read)).toContain("DELETE");
    // A write key lists what a read key of the same pool lists, and more.
    expect(allowedMethodsFor(pool, write)).toEqual([
      ...allowedMethodsFor(plainPool, write),
      "QUERY",
    ]);
  });

  it("reports path scoping only for the pool's read methods", () => {
    expect(readPathsFor(plainPool)).toBeNull();
    expect(
      readPathsFor({
        backend: "http",
        readMethods: ["POST"],
        readPaths: { POST: ["/v1/search"], PUT: ["/ignored"] },
      }),
    ).toEqual({ POST: ["/v1/search"] });
    expect(
      readPathsFor({ backend: "http", readMethods: [], readPaths: { PUT: ["/x"] } }),
    ).toBeNull();
    expect(
      readPathsFor({ backend: "postgres", readMethods: ["POST"], readPaths: { POST: ["/x"] } }),
    ).toBeNull();
  });
});
