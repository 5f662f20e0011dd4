import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectPostgres } from "../../adapters/postgres/connect.js";
import { cliEnv, runSluice } from "../cli/cli-process.js";
import { portOutsideEphemeralRange } from "../support/free-port.js";
import { DATABASE_URL, requirePostgres } from "../support/postgres.js";

const available = await requirePostgres("PostgreSQL connection refusals");

/** The test server's URL with another database (one nobody created) and a password. */
function missingDatabaseUrl(): string {
  const url = new URL(DATABASE_URL);
  url.pathname = "/sluice_test_no_such_database";
  url.password = "hunter2-not-shown";
  return url.toString();
}

/**
 * A PostgreSQL stand-in that asks for a cleartext password and refuses it with SQLSTATE 28P01,
 * as a real server with `password` or `scram` in pg_hba.conf answers a wrong one (the test
 * server trusts every local connection, so it cannot refuse a password itself).
 */
function startPasswordRefuser(): Promise<Server> {
  const message = (type: string, body: Buffer) => {
    const head = Buffer.alloc(5);
    head.write(type, 0);
    head.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([head, body]);
  };
  const server = createServer((socket: Socket) => {
    let stage: "startup" | "password" = "startup";
    let buffered = Buffer.alloc(0);
    socket.on("error", () => {});
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (stage === "startup" && buffered.length >= 8) {
        const length = buffered.readInt32BE(0);
        if (buffered.readInt32BE(4) === 80_877_103) {
          buffered = buffered.subarray(8);
          socket.write("N"); // SSLRequest: no TLS here
          return;
        }
        if (buffered.length < length) return;
        buffered = buffered.subarray(length);
        stage = "password";
        const cleartext = Buffer.alloc(4);
        cleartext.writeInt32BE(3);
        socket.write(message("R", cleartext));
      } else if (stage === "password" && buffered.length >= 5) {
        const fields = [
          "SFATAL",
          "VFATAL",
          "C28P01",
          'Mpassword authentication failed for user "ada"',
        ];
        socket.end(message("E", Buffer.from(`${fields.join("\0")}\0\0`)));
      }
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe.runIf(available)(
  "connecting to PostgreSQL: what waiting cannot cure fails at once",
  () => {
    let refuser: Server;
    let refuserUrl: string;
    beforeAll(async () => {
      refuser = await startPasswordRefuser();
      const { port } = refuser.address() as { port: number };
      refuserUrl = `postgres://ada:hunter2-not-shown@127.0.0.1:${port}/sluice`;
    });
    afterAll(() => new Promise<void>((resolve) => refuser.close(() => resolve())));

    it("a missing database: refused at once, naming the database and the URL without its password", async () => {
      const lines: string[] = [];
      const started = Date.now();
      const error = await connectPostgres(missingDatabaseUrl(), { log: (line) => lines.push(line) })
        .then(() => null)
        .catch((caught: Error) => caught);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(error?.message).toMatch(
        /^PostgreSQL at postgres:\/\/\S+:\*\*\*@\S+\/sluice_test_no_such_database refused the connection: database "sluice_test_no_such_database" does not exist$/,
      );
      expect(error?.message).not.toContain("hunter2");
      expect(lines).toEqual([]);
    });

    it("a wrong password: refused at once, never retried, the password never shown", async () => {
      const lines: string[] = [];
      const started = Date.now();
      const error = await connectPostgres(refuserUrl, { log: (line) => lines.push(line) })
        .then(() => null)
        .catch((caught: Error) => caught);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(error?.message).toMatch(
        /refused the connection: password authentication failed for user "ada"$/,
      );
      expect(error?.message).not.toContain("hunter2");
      expect(lines).toEqual([]);
    });

    it("a password in the query (?password=) is never shown either", async () => {
      const url = new URL(missingDatabaseUrl());
      url.password = "";
      url.search = "?password=hunter2-not-shown&sslmode=disable";
      const error = await connectPostgres(url.toString())
        .then(() => null)
        .catch((caught: Error) => caught);
      expect(error?.message).toMatch(
        /^PostgreSQL at postgres:\/\/\S+\/sluice_test_no_such_database\?\*\*\* refused the connection/,
      );
      expect(error?.message).not.toContain("hunter2");
    });

    it("a server that does not answer: retried, then a message that says so and for how long", async () => {
      const port = await portOutsideEphemeralRange();
      const lines: string[] = [];
      const error = await connectPostgres(`postgres://ada:hunter2-not-shown@127.0.0.1:${port}/x`, {
        log: (line) => lines.push(line),
        timeoutMs: 1_500,
        retryDelayMs: 200,
      })
        .then(() => null)
        .catch((caught: Error) => caught);
      expect(lines.length).toBeGreaterThan(1);
      expect(error?.message).toMatch(
        /^PostgreSQL at postgres:\/\/ada:\*\*\*@127\.0\.0\.1:\d+\/x does not answer \(connect ECONNREFUSED [^)]+\); gave up after \d+ attempts$/,
      );
      expect(`${error?.message}${lines.join("\n")}`).not.toContain("hunter2");
    });

    it("sluice serve exits with the refusal instead of retrying a wrong password forever", async () => {
      const result = await runSluice(
        ["serve", "--port", "0", "--database-url", refuserUrl],
        cliEnv({ SLUICE_SECRET_KEY: Buffer.alloc(32, 7).toString("base64") }),
      );
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(
        /^Error: PostgreSQL at postgres:\/\/(ada:)?\*\*\*@127\.0\.0\.1:\d+\/sluice refused the connection: password authentication failed for user "ada"$/,
      );
      expect(result.stdout).not.toMatch(/does not answer/);
      expect(result.stdout + result.stderr).not.toContain("hunter2");
    });

    it("a CLI command: one line on a missing database, exit 1, no stack trace", async () => {
      const started = Date.now();
      const result = await runSluice(["status", "--database-url", missingDatabaseUrl()], cliEnv());
      expect(Date.now() - started).toBeLessThan(8_000);
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(/refused the connection: database "\S+" does not exist/);
      expect(result.stderr).not.toContain("hunter2");
    });

    it("a CLI command: an unusable URL is bad input (exit 2) named by its source, not retried for 10 s", async () => {
      const bad = "postgres://ada:hunter2-not-shown@127.0.0.1:99999/sluice";
      const flag = await runSluice(["token", "list", "--team", "acme", "--database-url", bad]);
      expect(flag.code).toBe(2);
      expect(flag.stderr.trim()).toBe(
        "Error: --database-url is not a valid URL: check its host and its port (1 to 65535).",
      );
      const env = await runSluice(["status"], cliEnv({ SLUICE_DATABASE_URL: "mysql://x@y/z" }));
      expect(env.code).toBe(2);
      expect(env.stderr).toMatch(/^Error: SLUICE_DATABASE_URL must be a postgres:\/\//);
    });
  },
);
