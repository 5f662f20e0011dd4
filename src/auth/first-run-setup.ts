import { randomBytes } from "node:crypto";
import type { CatalogService } from "../catalog/catalog-service.js";
import { hashSecret, hasSecretShape, secretsEqual } from "../catalog/secrets.js";
import { teamWithOwnerIssues } from "../catalog/teams.js";
import { fieldIssue, throwIfIssues } from "../catalog/validation.js";
import { ConflictError, UnauthorizedError } from "../errors.js";
import type { AuthService, StartedSession } from "./auth-service.js";
import { passwordIssue } from "./passwords.js";

/** Prefix of a first-run setup link's token. */
export const SETUP_TOKEN_PREFIX = "slc_set_";

/** Why a setup link was refused (used, expired or mistyped: deliberately not told apart). */
export const SETUP_LINK_REFUSED =
  "This setup link does not work: it was used already, has expired, or was mistyped. Restart sluice serve for a new one.";

/** What the setup page asks for: the first team and its owner (you). */
export interface FirstTeamInput {
  teamName: string;
  slug: string;
  ownerName: string;
  ownerEmail: string;
  password: string;
}

/**
 * First run without the CLI: while the catalog has no team, `sluice serve` prints a setup
 * link; its holder creates the first team with themselves as owner and a password, and is
 * signed in. Tokens live hashed in the {@link AuthService}'s store (so every server sharing
 * the catalog database accepts them), work once and within the auth policy's link lifetime,
 * and stop working as soon as any team exists.
 *
 * @example
 * ```ts
 * const setup = new FirstRunSetup(auth, catalog);
 * const link = await setup.createToken(); // null once a team exists
 * const started = await setup.createFirstTeam(link!.token, { teamName: "Acme", slug: "acme", ownerName: "Ada", ownerEmail: "ada@acme.test", password });
 * ```
 */
export class FirstRunSetup {
  constructor(
    private readonly auth: AuthService,
    private readonly catalog: CatalogService,
  ) {}

  /** True while the catalog has no team (setup is open). */
  async isOpen(): Promise<boolean> {
    return (await this.catalog.store.listTeams()).length === 0;
  }

  /** A new setup token, or null when a team exists already. */
  async createToken(): Promise<{ token: string; expiresAt: number } | null> {
    if (!(await this.isOpen())) return null;
    const token = SETUP_TOKEN_PREFIX + randomBytes(32).toString("base64url");
    const createdAt = this.catalog.clock.now();
    const expiresAt = createdAt + this.auth.policy.linkTtlMs;
    await this.auth.store.insertSetupToken({ tokenHash: hashSecret(token), createdAt, expiresAt });
    return { token, expiresAt };
  }

  /** Whether the token would work now (it is not used up by asking). */
  async accepts(token: string): Promise<boolean> {
    if (!hasSecretShape(token, SETUP_TOKEN_PREFIX) || !(await this.isOpen())) return false;
    const hash = hashSecret(token);
    const found = await this.auth.store.findSetupToken(hash, this.catalog.clock.now());
    return found !== undefined && secretsEqual(found.tokenHash, hash);
  }

  /**
   * Everything wrong with the form at once, as `"field: message"` issues (`teamName`, `slug`,
   * `ownerName`, `ownerEmail`, `password`), so the page shows every error in one round; the
   * token is neither checked nor used up.
   */
  inputIssues(input: FirstTeamInput): string[] {
    const password = passwordIssue(input.password);
    return [...teamWithOwnerIssues(input), ...(password ? [fieldIssue("password", password)] : [])];
  }

  /**
   * Creates the first team with its owner and the owner's password, then signs them in.
   * ConflictError once a team exists; UnauthorizedError for a used, expired or unknown
   * token; InvalidArgumentError with field issues (`teamName`, `slug`, `ownerName`,
   * `ownerEmail`, `password`) for bad input, and the token keeps working.
   */
  async createFirstTeam(token: string, input: FirstTeamInput): Promise<StartedSession> {
    if (!(await this.isOpen())) {
      throw new ConflictError("Sluice is set up already: sign in instead.");
    }
    const refused = new UnauthorizedError(SETUP_LINK_REFUSED);
    if (!hasSecretShape(token, SETUP_TOKEN_PREFIX)) throw refused;
    const hash = hashSecret(token);
    const held = await this.auth.store.consumeSetupToken(hash, this.catalog.clock.now());
    if (!held || !secretsEqual(held.tokenHash, hash)) throw refused;
    let created: Awaited<ReturnType<CatalogService["createTeamWithOwner"]>>;
    try {
      throwIfIssues("setup", this.inputIssues(input));
      created = await this.catalog.createTeamWithOwner(input);
    } catch (error) {
      // Nothing was written: the same link may be used to correct the form.
      await this.auth.store.insertSetupToken(held);
      throw error;
    }
    await this.auth.setPassword(created.owner.id, input.password);
    await this.auth.store.deleteSetupTokens();
    // Signing in goes through a one-time link, so setup needs no sign-in path of its own.
    const link = await this.auth.createSignInLink(created.team.id, created.owner.id);
    return this.auth.redeemSignInLink(link.token);
  }
}
