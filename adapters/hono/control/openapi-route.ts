import type { Context } from "hono";
import { accepts } from "hono/accepts";
import type { ControlEnv } from "./control-env.js";
import { buildControlOpenApiDocument } from "./openapi-document.js";

/** Media types the document is served as: JSON, and OpenAPI's own registered JSON type. */
const DOCUMENT_TYPES = new Set([
  "*/*",
  "application/*",
  "application/json",
  "application/vnd.oai.openapi+json",
]);

/** Whether the request's Accept header admits JSON (no header admits anything). */
function acceptsJson(c: Context): boolean {
  if (!c.req.header("Accept")) return true;
  const admitted = accepts(c, {
    header: "Accept",
    supports: ["json"],
    default: "none",
    match: (ranges) =>
      ranges.some((range) => range.q > 0 && DOCUMENT_TYPES.has(range.type.toLowerCase()))
        ? "json"
        : "none",
  });
  return admitted === "json";
}

/**
 * `GET /api/v1/openapi.json` (no authentication): the OpenAPI document, naming `publicUrl`
 * as its server, else the origin the request came to. A configured URL with port 0 (a server
 * told to pick a free port) names no reachable port, so it falls back to the request's too.
 * An Accept header that admits no JSON gets 406.
 *
 * @example
 * ```ts
 * api.get("/openapi.json", openApiHandler("https://sluice.example.com"));
 * ```
 */
export function openApiHandler(publicUrl: string | undefined) {
  const configured =
    publicUrl !== undefined && new URL(publicUrl).port !== "0" ? publicUrl : undefined;
  const documents = new Map<string, ReturnType<typeof buildControlOpenApiDocument>>();
  return (c: Context<ControlEnv>) => {
    if (!acceptsJson(c)) {
      return c.json({ message: "This document is JSON: accept application/json (or */*)." }, 406);
    }
    const serverUrl = (configured ?? new URL(c.req.url).origin).replace(/\/+$/, "");
    let document = documents.get(serverUrl);
    if (document === undefined) {
      // One entry per name the server is reached by: a handful, bounded by its host routing.
      document = buildControlOpenApiDocument(serverUrl);
      if (documents.size < 16) documents.set(serverUrl, document);
    }
    return c.json(document);
  };
}
