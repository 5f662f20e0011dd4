import { AuthService } from "../../src/auth/auth-service.js";
import type { CatalogService } from "../../src/catalog/catalog-service.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { SqliteAuthStore } from "../sqlite/sqlite-auth-store.js";
import { SqliteCatalogStore } from "../sqlite/sqlite-catalog-store.js";

/**
 * Dashboard sign-in over the command's data directory (sessions and passwords live in its
 * database, beside the catalog).
 *
 * @example
 * ```ts
 * await authServiceFor(catalog).signOutEverywhere(user.id);
 * ```
 */
export function authServiceFor(catalog: CatalogService): AuthService {
  const store = catalog.store;
  if (!(store instanceof SqliteCatalogStore)) {
    throw new InvalidArgumentError("Dashboard sign-in needs the SQLite catalog.");
  }
  return new AuthService({
    store: new SqliteAuthStore(store.database),
    catalog: store,
    clock: catalog.clock,
  });
}
