import type { HeaderLookup } from "../lock/request-headers.js";

/**
 * Headers through which many origin frameworks let a request stand for another method
 * (Express's method-override, Google APIs, Symfony, Rails' Rack::MethodOverride, ...).
 */
export const METHOD_OVERRIDE_HEADERS = [
  "x-http-method-override",
  "x-http-method",
  "x-method-override",
] as const;

/**
 * The methods a request asks the origin to apply instead of its own, through a
 * method-override header (upper case, one per header present); empty when it asks none. The
 * key rules check each of them as well as the request method: otherwise a read-only key
 * could send `POST` + `X-HTTP-Method-Override: DELETE` to an origin that honours it.
 *
 * @example
 * ```ts
 * overriddenMethods(headers); // ["DELETE"] for X-HTTP-Method-Override: delete
 * ```
 */
export function overriddenMethods(headers: HeaderLookup): string[] {
  const methods: string[] = [];
  for (const name of METHOD_OVERRIDE_HEADERS) {
    const value = headers.get(name);
    if (value !== null) methods.push(value.trim().toUpperCase());
  }
  return methods;
}

/**
 * Whether a method-override header asks for `method` (upper case). Allocates nothing: every
 * proxied request is checked for TRACE.
 *
 * @example
 * ```ts
 * overridesTo(headers, "TRACE"); // true for X-HTTP-Method-Override: trace
 * ```
 */
export function overridesTo(headers: HeaderLookup, method: string): boolean {
  for (const name of METHOD_OVERRIDE_HEADERS) {
    const value = headers.get(name);
    if (value !== null && value.trim().toUpperCase() === method) return true;
  }
  return false;
}
