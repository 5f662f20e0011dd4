import type { SluiceServer } from "../server/create-server.js";
import { firstSignInLinks } from "../server/sign-in-links.js";

/**
 * Prints a one-time dashboard sign-in link for each team nobody can sign in to yet, or how
 * to start when there is no team at all.
 *
 * @example
 * ```ts
 * await printFirstSignInLinks((line) => say.info(line), server, listening.url);
 * ```
 */
export async function printFirstSignInLinks(
  out: (line: string) => void,
  server: SluiceServer,
  url: string,
): Promise<void> {
  if ((await server.catalog.store.listTeams()).length === 0) {
    out('No teams yet: create one with "sluice team create", then restart for a sign-in link.');
    return;
  }
  const minutes = Math.round(server.auth.policy.linkTtlMs / 60_000);
  for (const link of await firstSignInLinks(server.auth, server.catalog.store, url)) {
    out(
      `Sign in to team ${link.team.slug} as ${link.user.email} (works once, within ${minutes} minutes; then set a password):`,
    );
    out(`  ${link.url}`);
  }
}
