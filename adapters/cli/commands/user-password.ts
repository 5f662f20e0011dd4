import { normalizeEmail } from "../../../src/catalog/teams.js";
import { InvalidArgumentError } from "../../../src/errors.js";
import { DATA_DIR_OPTION, NO_SECRETS, withCatalog } from "../catalog-session.js";
import { authServiceFor } from "../cli-auth.js";
import { type CliIo, type CommandSpec, requiredString } from "../command.js";

async function readNewPassword(io: CliIo): Promise<string> {
  if (!io.readSecret) throw new InvalidArgumentError("No way to read a password here.");
  const password = await io.readSecret("New password: ");
  // Only a prompt can be mistyped unseen; piped input is taken as it is.
  if (process.stdin.isTTY && io.readSecret !== undefined) {
    const again = await io.readSecret("Repeat it: ");
    if (again !== password)
      throw new InvalidArgumentError("The two passwords differ; nothing was changed.");
  }
  return password;
}

/**
 * `sluice user set-password`: sets the dashboard password of a user, read from stdin or a
 * prompt (never from argv), and signs them out everywhere.
 *
 * @example
 * ```ts
 * await runCli(["user", "set-password", "--email", "ada@example.com"], { ...io, readSecret: async () => pw });
 * ```
 */
export const userSetPasswordCommand: CommandSpec = {
  name: "user set-password",
  summary: "Set a user's dashboard password (read from stdin or a prompt).",
  options: {
    email: {
      type: "string",
      placeholder: "<email>",
      description: "The user's email.",
      required: true,
    },
    ...DATA_DIR_OPTION,
  },
  details: [
    "The password is never taken from the command line (it would show in `ps` and in shell history): " +
      "type it at the prompt, or pipe it in. At least 12 characters. It is stored as a scrypt hash; " +
      "the user's dashboard sessions end, so every browser signs in again with it.",
  ],
  examples: [
    "sluice user set-password --email ada@example.com",
    'printf %s "$ADA_PASSWORD" | sluice user set-password --email ada@example.com',
  ],
  run: async (args, io) => {
    const email = requiredString(args, "email");
    return withCatalog(
      args,
      io,
      async (catalog, database) => {
        const user = await catalog.store.findUserByEmail(normalizeEmail(email));
        if (!user) {
          throw new InvalidArgumentError(
            `No user with email ${email}. Add them with "sluice user add".`,
          );
        }
        // Asked only once the user is known: nobody types a password for a typo.
        const password = await readNewPassword(io);
        const auth = authServiceFor(database);
        try {
          await auth.setPassword(user.id, password);
        } catch (error) {
          if (error instanceof InvalidArgumentError) {
            throw new InvalidArgumentError(error.message.replace(/^password: /, "The password: "));
          }
          throw error;
        }
        const ended = await auth.signOutEverywhere(user.id);
        io.out(`Set the password of ${user.email} (user id ${user.id}).`);
        if (ended > 0) io.out(`Ended ${ended} dashboard session${ended === 1 ? "" : "s"}.`);
        return 0;
      },
      NO_SECRETS,
    );
  },
};
