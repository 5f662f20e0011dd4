import { SluiceError } from "../errors.js";

/**
 * Too many failed sign-ins for the account or from the address; HTTP 429. `retryAfterMs`
 * says when the window ends.
 *
 * @example
 * ```ts
 * try { await auth.signIn(input); }
 * catch (error) { if (error instanceof SignInThrottledError) show(error.message); }
 * ```
 */
export class SignInThrottledError extends SluiceError {
  constructor(readonly retryAfterMs: number) {
    const minutes = Math.max(1, Math.ceil(retryAfterMs / 60_000));
    super(
      "too_many_requests",
      `Too many failed sign-ins; try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`,
    );
  }
}
