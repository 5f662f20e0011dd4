import { expect } from "vitest";
import type { ApiResponse } from "./harness.js";

/** The contract's Error body: exactly `{message}` with a non-empty string. */
export function expectErrorBody(response: ApiResponse, status: number): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: { message: expect.stringMatching(/\S/) },
  });
}

/** A 422 body: `{message, errors}` with `errors` listing exactly `fields`. */
export function expectValidationError(response: ApiResponse, fields: string[]): void {
  expect(response.status).toBe(422);
  expect(response.body).toEqual({
    message: expect.stringMatching(/\S/),
    errors: expect.any(Object),
  });
  expect(Object.keys(response.body.errors).sort()).toEqual([...fields].sort());
  for (const messages of Object.values(response.body.errors)) {
    expect(Array.isArray(messages) && messages.length > 0).toBe(true);
    for (const message of messages as unknown[]) expect(typeof message).toBe("string");
  }
}
