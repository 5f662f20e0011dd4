import { FirstRunSetup } from "../../src/auth/first-run-setup.js";
import type { SluiceServer } from "../server/create-server.js";
import { firstSignInLinks } from "../server/sign-in-links.js";

/**
 * How to get into the dashboard, printed when `sluice serve` starts: with no team yet, a
 * one-time setup link that creates the first team in the browser; else a one-time sign-in
 * link for each team nobody can sign in to yet, and how to get one later without a restart.
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
  const minutes = Math.round(server.auth.policy.linkTtlMs / 60_000);
  const setup = await new FirstRunSetup(server.auth, server.catalog).createToken();
  if (setup) {
    out(
      `No teams yet. Open this link to create yours in the browser (works once, within ${minutes} minutes; restart for a new one):`,
    );
    out(`  ${url}/setup?token=${setup.token}`);
    return;
  }
  for (const link of await firstSignInLinks(server.auth, server.catalog.store, url)) {
    out(
      `Sign in to team ${link.team.slug} as ${link.user.email} (works once, within ${minutes} minutes; then set a password):`,
    );
    out(`  ${link.url}`);
  }
  out("Another sign-in link, any time: sluice user sign-in-link --email <email>");
}
