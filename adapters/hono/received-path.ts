import { ambiguousPathProblem } from "../../src/catalog/ambiguous-path.js";
import { pathAndQueryOf } from "../../src/signing/canonical-request.js";
import { nodeBindings } from "./lock/node-bindings.js";

/**
 * What makes the path of a request ambiguous (see {@link ambiguousPathProblem}), or null. The
 * path is read as the client sent it: on Node, before the URL parser resolved `..` and
 * `%2e%2e` away (`/api/v1/pools/%2e%2e/budgets` would otherwise be served as
 * `/api/v1/budgets`); elsewhere from `request.url`.
 *
 * @example
 * ```ts
 * receivedPathProblem(c.req.raw, c.env); // 'the path has a dot segment ("%2e%2e")…'
 * ```
 */
export function receivedPathProblem(request: Request, env: unknown): string | null {
  const received = pathAndQueryOf(nodeBindings(env).incoming?.url ?? request.url);
  const query = received.indexOf("?");
  return ambiguousPathProblem(query < 0 ? received : received.slice(0, query));
}
