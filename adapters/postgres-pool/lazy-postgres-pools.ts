import { BadGatewayError } from "../../src/errors.js";
import type { PostgresPoolsOptions } from "./postgres-pools.js";
import type { SqlRunner } from "./types.js";

/**
 * A {@link SqlRunner} that loads node-postgres (`PostgresPools`) on its first query: a server
 * with no postgres pool never loads the driver, and one installed without `pg` answers its
 * postgres pools with a 502 that says why instead of failing to start.
 *
 * @example
 * ```ts
 * const proxy = createProxyApp({ governor, catalog, poolDomain, sql: { runner: lazyPostgresPools() } });
 * ```
 */
export function lazyPostgresPools(options?: PostgresPoolsOptions): SqlRunner {
  let loaded: Promise<SqlRunner> | null = null;
  const load = () => {
    loaded ??= import("./postgres-pools.js").then(
      (module) => new module.PostgresPools(options),
      () => {
        throw new BadGatewayError(
          "This server cannot serve database pools: the pg package is not installed (npm install pg).",
        );
      },
    );
    return loaded;
  };
  return {
    run: async (target, batch, signal) => (await load()).run(target, batch, signal),
    close: async () => {
      if (loaded) await (await loaded.catch(() => null))?.close();
    },
  };
}
