import type { AuthService } from "../../src/auth/auth-service.js";
import type { CatalogStore, TeamRecord, UserRecord } from "../../src/catalog/types.js";

/** A one-time dashboard sign-in link for a team nobody can sign in to yet. */
export interface FirstSignInLink {
  team: TeamRecord;
  user: UserRecord;
  url: string;
  expiresAt: number;
}

/**
 * For every team of which no member has a password yet, a one-time sign-in link for its
 * first owner (like Jupyter's token link): it works once, within the auth policy's link
 * lifetime (15 minutes). Teams someone can already sign in to get none.
 *
 * @example
 * ```ts
 * for (const link of await firstSignInLinks(server.auth, server.catalog.store, url)) io.out(link.url);
 * ```
 */
export async function firstSignInLinks(
  auth: AuthService,
  store: CatalogStore,
  baseUrl: string,
): Promise<FirstSignInLink[]> {
  const links: FirstSignInLink[] = [];
  for (const team of await store.listTeams()) {
    const memberships = await store.listMemberships(team.id);
    let anyPassword = false;
    for (const membership of memberships) {
      if (await auth.hasPassword(membership.userId)) anyPassword = true;
    }
    const owner = memberships.find((membership) => membership.role === "owner");
    const user = owner && (await store.getUser(owner.userId));
    if (anyPassword || !user) continue;
    const { token, expiresAt } = await auth.createSignInLink(team.id, user.id);
    links.push({ team, user, url: `${baseUrl}/sign-in/link?token=${token}`, expiresAt });
  }
  return links;
}
