import type { FetchApp } from "./host-router.js";

// Every `/.well-known/` path: none is a dashboard page, and a client probing one (an OpenID
// configuration, say) must get a JSON 404, not the dashboard's sign-in redirect.
const ASSISTANT_PATH = /^\/(?:mcp$|oauth\/|\.well-known\/)/;

/**
 * The control app with the assistant app in front of it for `/mcp`, `/oauth/*` and
 * `/.well-known/*` (the OAuth documents, and a JSON 404 for any other); the control app for
 * everything else.
 *
 * @example
 * ```ts
 * controlApp: withAssistantApp(createControlApp(deps), options.assistantApp?.(serverDeps)),
 * ```
 */
export function withAssistantApp(control: FetchApp, assistant: FetchApp | undefined): FetchApp {
  if (!assistant) return control;
  return {
    fetch: (request, env) =>
      ASSISTANT_PATH.test(pathOf(request.url))
        ? assistant.fetch(request, env)
        : control.fetch(request, env),
  };
}

/**
 * The path of a request URL.
 *
 * @example
 * ```ts
 * pathOf("http://localhost:8080/mcp?x=1"); // "/mcp"
 * ```
 */
export function pathOf(url: string): string {
  return new URL(url).pathname;
}
