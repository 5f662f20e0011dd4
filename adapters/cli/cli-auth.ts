import { AuthService } from "../../src/auth/auth-service.js";
import type { CatalogDatabase } from "../server/catalog-database.js";

/**
 * Dashboard sign-in over the command's catalog database: the data directory's SQLite file,
 * or the PostgreSQL database of `--database-url` (so a link or a new password reaches every
 * server of the fleet).
 *
 * @example
 * ```ts
 * await withCatalog(args, io, async (catalog, database) => {
 *   await authServiceFor(database).signOutEverywhere(user.id);
 *   return 0;
 * });
 * ```
 */
export function authServiceFor(database: Pick<CatalogDatabase, "catalog" | "auth">): AuthService {
  return new AuthService({
    store: database.auth,
    catalog: database.catalog.store,
    clock: database.catalog.clock,
  });
}
