import {
  type ConversionConfig,
  type JsonSchema,
  toJsonSchema,
  toJsonSchemaDefs,
} from "@valibot/to-json-schema";
import type * as v from "valibot";

/*
 * Helpers to build OpenAPI 3.1 documents from the same valibot schemas that validate
 * requests and type responses. OpenAPI 3.1 uses JSON Schema 2020-12 as is.
 */

type AnySchema = v.GenericSchema;

/** A JSON object in an OpenAPI document; the document is plain data served as JSON. */
export type OpenApiObject = Record<string, unknown>;

const COMPONENT_SCHEMAS = "#/components/schemas/";

/**
 * Custom checks (`check`, `partial_check`) carry no JSON Schema meaning; the schemas that
 * use them add the equivalent keywords through `metadata`. Anything else unsupported throws,
 * so a schema the document cannot describe fails loudly in tests rather than silently.
 */
const CONVERSION: ConversionConfig = {
  target: "draft-2020-12",
  typeMode: "input",
  errorMode: "throw",
  ignoreActions: ["check", "partial_check"],
  overrideRef: ({ referenceId }) => COMPONENT_SCHEMAS + referenceId,
};

/**
 * JSON Schemas for `components.schemas`, one per named valibot schema. A named schema used
 * inside another becomes a `$ref` to its component.
 *
 * @example
 * ```ts
 * const schemas = componentSchemas({ Pool: PoolSchema, PoolList: v.object({ data: v.array(PoolSchema) }) });
 * // schemas.PoolList.properties.data.items → { $ref: "#/components/schemas/Pool" }
 * ```
 */
export function componentSchemas(named: Record<string, AnySchema>): Record<string, JsonSchema> {
  return toJsonSchemaDefs(named, CONVERSION);
}

/**
 * A `$ref` to a component schema.
 *
 * @example
 * ```ts
 * schemaRef("Pool"); // { $ref: "#/components/schemas/Pool" }
 * ```
 */
export function schemaRef(name: string): OpenApiObject {
  return { $ref: COMPONENT_SCHEMAS + name };
}

/**
 * A response or request-body `content` map for JSON.
 *
 * @example
 * ```ts
 * jsonContent(schemaRef("Pool")); // { "application/json": { schema: { $ref: … } } }
 * ```
 */
export function jsonContent(schema: OpenApiObject): OpenApiObject {
  return { "application/json": { schema } };
}

/**
 * A JSON response object with a description.
 *
 * @example
 * ```ts
 * jsonResponse("The pool.", schemaRef("PoolResponse"));
 * ```
 */
export function jsonResponse(description: string, schema: OpenApiObject): OpenApiObject {
  return { description, content: jsonContent(schema) };
}

/**
 * One `in: query` parameter per property of an object schema (wrapped in a pipe or not),
 * each optional unless the schema requires it.
 *
 * @example
 * ```ts
 * queryParameters(v.object({ from: v.optional(v.string()) }));
 * // [{ name: "from", in: "query", required: false, schema: { type: "string" } }]
 * ```
 */
export function queryParameters(objectSchema: AnySchema): OpenApiObject[] {
  const converted = toJsonSchema(objectSchema, CONVERSION) as {
    properties?: Record<string, JsonSchema & { description?: string }>;
    required?: string[];
  };
  const required = new Set(converted.required ?? []);
  return Object.entries(converted.properties ?? {}).map(([name, schema]) => {
    const { description, ...rest } = schema;
    const parameter: OpenApiObject = { name, in: "query", required: required.has(name) };
    if (description !== undefined) parameter.description = description;
    parameter.schema = rest;
    return parameter;
  });
}

/**
 * A required `in: path` parameter.
 *
 * @example
 * ```ts
 * pathParameter("pool", { type: "string" }, "The pool subdomain.");
 * ```
 */
export function pathParameter(
  name: string,
  schema: OpenApiObject,
  description: string,
): OpenApiObject {
  return { name, in: "path", required: true, description, schema };
}
