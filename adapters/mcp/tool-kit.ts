import type {
  AuthInfo,
  CallToolResult,
  McpServer,
  ToolAnnotations,
} from "@modelcontextprotocol/server";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import type { AccessLog } from "../../src/access-log/types.js";
import type { CatalogService } from "../../src/catalog/catalog-service.js";
import type { Clock } from "../../src/clock/clock.js";
import { SluiceError } from "../../src/errors.js";
import type { Governor } from "../../src/governor/types.js";
import type { MetricsRecorder } from "../../src/metrics/recorder.js";
import { type OAuthScope, scopesForRole } from "../oauth/scopes.js";

/** What the tools read and change: the server's parts. */
export interface ToolDeps {
  catalog: CatalogService;
  governor: Governor;
  metrics: MetricsRecorder;
  accessLog: AccessLog;
  clock: Clock;
  /** Where unexpected tool failures are reported (the caller sees a generic tool error). */
  logError: (error: unknown) => void;
}

/** Who is calling: the verified token's user, team and scopes. */
export interface ToolAccess {
  userId: number;
  teamId: number;
  clientId: string;
  scopes: OAuthScope[];
}

/** A refusal the assistant should read: a missing scope, a pool of no concern, bad input. */
export class ToolRefusal extends Error {}

// biome-ignore lint/suspicious/noExplicitAny: tool schemas vary; each tool is typed where defined.
type AnySchema = v.GenericSchema<any, any>;

/**
 * One MCP tool: its schemas (valibot, advertised as JSON Schema), annotations, the scope it
 * needs (null: any valid token) and what it does for a caller.
 */
export interface SluiceTool<Input extends AnySchema, Output extends AnySchema> {
  name: string;
  title: string;
  description: string;
  scope: OAuthScope | null;
  annotations: ToolAnnotations;
  input: Input;
  output: Output;
  run(
    args: v.InferOutput<Input>,
    access: ToolAccess,
    deps: ToolDeps,
  ): Promise<v.InferOutput<Output>>;
}

/**
 * Declares a tool (keeps its input and output types tied to its schemas).
 *
 * @example
 * ```ts
 * export const whoami = defineTool({ name: "whoami", scope: null, input: v.object({}), output: WhoamiSchema, … });
 * ```
 */
export function defineTool<Input extends AnySchema, Output extends AnySchema>(
  tool: SluiceTool<Input, Output>,
): SluiceTool<Input, Output> {
  return tool;
}

/** Read-only tools say so, so clients may run them without asking each time. */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/**
 * The caller of a verified token, from the `extra` its verifier attached.
 *
 * @example
 * ```ts
 * const access = toolAccessOf(ctx.authInfo);
 * ```
 */
export function toolAccessOf(authInfo: AuthInfo | undefined): ToolAccess | null {
  const extra = authInfo?.extra as { userId?: number; teamId?: number } | undefined;
  if (!authInfo || typeof extra?.userId !== "number" || typeof extra.teamId !== "number") {
    return null;
  }
  return {
    userId: extra.userId,
    teamId: extra.teamId,
    clientId: authInfo.clientId,
    scopes: authInfo.scopes as OAuthScope[],
  };
}

/**
 * A valibot schema as the SDK takes it (Standard Schema with JSON Schema). Checks JSON Schema
 * cannot say (a label's control characters, a date-time's zone) are left out of the
 * advertised schema and still enforced when a call arrives.
 */
function standardSchema(schema: AnySchema) {
  const standard = toStandardJsonSchema(schema)["~standard"];
  const lenient = (options: { target: string; libraryOptions?: Record<string, unknown> }) => ({
    ...options,
    libraryOptions: { errorMode: "ignore", ...options.libraryOptions },
  });
  return {
    "~standard": {
      ...standard,
      jsonSchema: {
        input: (options: Parameters<typeof standard.jsonSchema.input>[0]) =>
          standard.jsonSchema.input(lenient(options)),
        output: (options: Parameters<typeof standard.jsonSchema.output>[0]) =>
          standard.jsonSchema.output(lenient(options)),
      },
    },
  };
}

/**
 * Why a scope is missing, and what helps: consent again when the user's role allows it, an
 * owner or admin when it does not (reconnecting would not help a member).
 */
async function missingScopeMessage(
  scope: OAuthScope,
  access: ToolAccess,
  deps: ToolDeps,
): Promise<string> {
  const membership = await deps.catalog.store.getMembership(access.teamId, access.userId);
  if (membership && !scopesForRole(membership.role).includes(scope)) {
    return `This connection lacks the "${scope}" scope: your role in this team (${membership.role}) does not allow it. An owner or admin can do this, or give you their role.`;
  }
  return `This connection lacks the "${scope}" scope. Reconnect the assistant and allow it on the consent page.`;
}

function textResult(text: string, isError: boolean): CallToolResult {
  return { content: [{ type: "text", text }], isError };
}

/**
 * Registers the tools on a per-request server for one caller. Each call checks the tool's
 * scope first; refusals and Sluice's own errors (not found, invalid input) become tool errors
 * the assistant can read, anything else a generic tool error (reported to `logError`).
 *
 * @example
 * ```ts
 * registerSluiceTools(server, SLUICE_TOOLS, access, deps);
 * ```
 */
export function registerSluiceTools(
  server: McpServer,
  tools: readonly SluiceTool<AnySchema, AnySchema>[],
  access: ToolAccess | null,
  deps: ToolDeps,
): void {
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: `${tool.description}${tool.scope ? ` Needs the ${tool.scope} scope.` : ""}`,
        inputSchema: standardSchema(tool.input),
        outputSchema: standardSchema(tool.output),
        annotations: { title: tool.title, ...tool.annotations },
      },
      async (args: unknown): Promise<CallToolResult> => {
        try {
          if (!access) throw new ToolRefusal("This call is not authenticated.");
          if (tool.scope && !access.scopes.includes(tool.scope)) {
            throw new ToolRefusal(await missingScopeMessage(tool.scope, access, deps));
          }
          const result = await tool.run(args as never, access, deps);
          return {
            content: [{ type: "text", text: JSON.stringify(result) }],
            structuredContent: result as Record<string, unknown>,
          };
        } catch (error) {
          if (error instanceof ToolRefusal || error instanceof SluiceError) {
            return textResult(error.message, true);
          }
          deps.logError(error);
          return textResult(`${tool.name} failed unexpectedly; try again later.`, true);
        }
      },
    );
  }
}
