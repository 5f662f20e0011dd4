import { expect } from "vitest";
import type { RawAnswer, RawRequest } from "./harness.js";

/** Which error shape an answer owes the caller. */
export type Surface = "control" | "lock" | "oauth" | "any";

/** A short description of a request for assertion messages: enough to replay it. */
export function describeRequest(request: RawRequest): string {
  const body =
    request.body === undefined
      ? ""
      : ` body(${request.body.length})=${JSON.stringify(String(request.body).slice(0, 200))}`;
  const headers = Object.fromEntries(
    Object.entries(request.headers ?? {}).map(([name, value]) => {
      const text = String(value);
      return [name, text.length > 80 ? `${text.slice(0, 40)}…(${text.length} chars)` : value];
    }),
  );
  return `${request.method} ${request.path.slice(0, 300)} ${JSON.stringify(headers)}${body}`;
}

/**
 * Asserts the project rule: an answer (no reset, no hang), never a 5xx, and an error in the
 * contract's shape — Control API `{message}`, Lock API `{error, message}`, OAuth
 * `{error, error_description?}`.
 */
export function expectContractAnswer(
  request: RawRequest,
  answer: RawAnswer,
  surface: Surface,
): void {
  const what = `${describeRequest(request)} → ${answer.status} ${answer.failure ?? answer.text.slice(0, 300)}`;
  expect(answer.failure, what).toBeUndefined();
  expect(answer.status, what).toBeGreaterThanOrEqual(200);
  expect(answer.status, what).toBeLessThan(500);
  // A HEAD answer has no body; 405/404 shapes are checked on the other methods.
  if (answer.status < 400 || request.method === "HEAD" || surface === "any") return;
  // 431 (headers too large) and 413 may come from node's parser before any app runs.
  if (answer.status === 431) return;
  const body = answer.json as Record<string, unknown> | undefined;
  expect(body, what).toBeTypeOf("object");
  if (surface === "control") expect(body?.message, what).toBeTypeOf("string");
  if (surface === "lock") {
    expect(body?.error, what).toBeTypeOf("string");
    expect(body?.message, what).toBeTypeOf("string");
  }
  if (surface === "oauth") expect(body?.error, what).toBeTypeOf("string");
}

/** fast-check settings: a fixed seed (replay with FUZZ_SEED) and bounded runs (FUZZ_RUNS). */
export function fuzzOptions(defaultRuns: number, seed: number) {
  return {
    numRuns: Number(process.env.FUZZ_RUNS ?? defaultRuns),
    seed: Number(process.env.FUZZ_SEED ?? seed),
    // One shrink pass is enough to name the input; a long shrink would blow the time budget.
    endOnFailure: false,
    interruptAfterTimeLimit: 40_000,
  };
}

/** Progress lines the server logs at start-up and on syncs; anything else is a fault report. */
const PROGRESS = /^(Catalog|Governor|Listening|Redis|Metrics)\b/;

/** The server log lines that report a fault (a 5xx, an error a handler did not expect). */
export function faultLines(logs: readonly string[]): string[] {
  return logs.filter((line) => !PROGRESS.test(line));
}
