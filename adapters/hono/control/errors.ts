import { SluiceError } from "../../../src/errors.js";

/**
 * The pool has no key with that id (or the id is not a number). Another team's keys are
 * "not found" too: their existence is never revealed.
 *
 * @example
 * ```ts
 * throw new PoolKeyNotFoundError("12");
 * ```
 */
export class PoolKeyNotFoundError extends SluiceError {
  constructor(readonly keyId: string) {
    super("not_found", "Pool key not found.");
  }
}
