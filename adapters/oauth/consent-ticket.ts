import { randomBytes } from "node:crypto";
import { SecretBox } from "../../src/catalog/encryption.js";
import type { EncryptedSecret } from "../../src/catalog/types.js";
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

/** What seals a ticket: the catalog's secret box, whose key every server of a fleet shares. */
export type TicketSealer = Pick<SecretBox, "seal" | "open">;

/**
 * The consent form's token: the checked authorization request, the user it was shown to and
 * an expiry, sealed (AES-GCM) with the catalog's secret key. The form posts it back, so
 * approving needs no server-side state, cannot change what was shown, and works only for that
 * signed-in user (a cross-site form cannot produce one). Servers sharing a catalog share the
 * key, so the Allow button works whichever server behind a load balancer it reaches; without
 * a sealer the key is this process's own.
 *
 * @example
 * ```ts
 * const tickets = new ConsentTickets(catalog.secretBox);
 * const ticket = tickets.issue(request, user, now);
 * tickets.open(ticket, user, now); // the request, or null
 * ```
 */
export class ConsentTickets {
  constructor(private readonly sealer: TicketSealer = new SecretBox(randomBytes(32))) {}

  issue(request: AuthorizationRequest, user: SessionUser, now: number): string {
    const body: TicketBody = {
      request,
      userId: user.userId,
      teamId: user.teamId,
      expiresAt: now + TICKET_TTL_MS,
    };
    const sealed = this.sealer.seal(JSON.stringify(body));
    return Buffer.from(JSON.stringify(sealed)).toString("base64url");
  }

  /** The request of a valid, unexpired ticket issued to `user`; null otherwise. */
  open(ticket: string, user: SessionUser, now: number): AuthorizationRequest | null {
    let body: TicketBody;
    try {
      const sealed = JSON.parse(Buffer.from(ticket, "base64url").toString("utf8"));
      body = JSON.parse(this.sealer.open(sealed as EncryptedSecret)) as TicketBody;
    } catch {
      // Not a ticket, altered, or sealed under another key: the same answer as an expired one.
      return null;
    }
    if (body.userId !== user.userId || body.teamId !== user.teamId) return null;
    return now < body.expiresAt ? body.request : null;
  }
}
