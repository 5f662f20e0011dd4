import type Database from "better-sqlite3";
import { UnitGate } from "../../src/util/unit-gate.js";

const gates = new WeakMap<Database.Database, UnitGate>();

/**
 * The one {@link UnitGate} of a database connection, shared by every store on it: a catalog
 * unit keeps its transaction open across awaits, and a metrics or access-log write on the
 * same connection meanwhile would otherwise join (and maybe roll back with) it.
 *
 * @example
 * ```ts
 * await databaseGate(database).idle();
 * ```
 */
export function databaseGate(database: Database.Database): UnitGate {
  let gate = gates.get(database);
  if (!gate) {
    gate = new UnitGate();
    gates.set(database, gate);
  }
  return gate;
}
