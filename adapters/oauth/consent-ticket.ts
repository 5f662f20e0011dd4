import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { AuthorizationRequest } from "./authorization-request.js";
import type { SessionUser } from "./session.js";

/** How long a consent page may stay open before its form is refused. */
const TICKET_TTL_MS = 10 * 60_000;

interface TicketBody {
  request: AuthorizationRequest;
  userId: number;
  teamId: number;
  expiresAt: number;
}

/**
 * The consent form's token: the checked authorization request, the user it was shown to and
 * an expiry, signed with a per-process key. The form posts it back, so approving needs no
 * server-side state, cannot change what was shown, and works only for that signed-in user
 * (a cross-site form cannot produce one). A restart invalidates open consent pages.
 *
 * @example
 * ```ts
 * const tickets = new ConsentTickets();
 * const ticket = tickets.issue(request, user, now);
 * tickets.open(ticket, user, now); // the request, or null
 * ```
 */
export class ConsentTickets {
  private readonly key = randomBytes(32);

  issue(request: AuthorizationRequest, user: SessionUser, now: number): string {
    const body: TicketBody = {
      request,
      userId: user.userId,
      teamId: user.teamId,
      expiresAt: now + TICKET_TTL_MS,
    };
    const payload = Buffer.from(JSON.stringify(body)).toString("base64url");
    return `${payload}.${this.sign(payload)}`;
  }

  /** The request of a valid, unexpired ticket issued to `user`; null otherwise. */
  open(ticket: string, user: SessionUser, now: number): AuthorizationRequest | null {
    const [payload, signature, extra] = ticket.split(".");
    if (payload === undefined || signature === undefined || extra !== undefined) return null;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const body = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as TicketBody;
    if (body.userId !== user.userId || body.teamId !== user.teamId) return null;
    return now < body.expiresAt ? body.request : null;
  }

  private sign(payload: string): string {
    return createHmac("sha256", this.key).update(payload).digest("base64url");
  }
}
