import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../adapters/cli/run-cli.js";
import { SERVER_CONFIG_SOURCES } from "../../adapters/server/config.js";
import { REPO_ROOT } from "./cli-process.js";

const CLI_DOC = readFileSync(join(REPO_ROOT, "docs/cli.md"), "utf8");

/** Flags every catalog command takes, documented once in the introduction. */
const SHARED_FLAGS = ["data-dir", "database-url"];

/** The `## \`sluice <name>\`` section of docs/cli.md, up to the next section. */
function sectionOf(name: string): string {
  const start = CLI_DOC.indexOf(`## \`sluice ${name}`);
  if (start === -1) return "";
  const end = CLI_DOC.indexOf("\n## ", start + 1);
  return CLI_DOC.slice(start, end === -1 ? undefined : end);
}

function mentions(text: string, flag: string): boolean {
  return new RegExp(`--${flag}(?![a-z-])`).test(text);
}

// A newcomer reads docs/cli.md, not the source: a flag added to a command must be found there.
describe("docs/cli.md against the commands", () => {
  it("has a table row, with its variable, for every sluice serve setting", () => {
    const missing = Object.values(SERVER_CONFIG_SOURCES)
      .filter(({ flag }) => flag !== null)
      .filter(({ flag, env }) => !CLI_DOC.includes(`| \`--${flag}\` | \`${env}\` |`))
      .map(({ flag }) => `--${flag}`);
    expect(missing).toEqual([]);
  });

  it("names every flag of every command in that command's section", () => {
    const missing: string[] = [];
    for (const command of COMMANDS) {
      const section = sectionOf(command.name);
      if (section === "") missing.push(`sluice ${command.name} (no section)`);
      for (const flag of Object.keys(command.options)) {
        if (flag === "help" || SHARED_FLAGS.includes(flag)) continue;
        if (!mentions(section, flag)) missing.push(`sluice ${command.name} --${flag}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("explains the flags every catalog command shares before the first command", () => {
    const introduction = CLI_DOC.slice(0, CLI_DOC.indexOf("\n## "));
    for (const flag of SHARED_FLAGS) expect(mentions(introduction, flag), flag).toBe(true);
  });
});
