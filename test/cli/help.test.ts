import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS, runCli } from "../../adapters/cli/run-cli.js";
import { captureIo } from "./capture-io.js";
import { cliEnv, REPO_ROOT, runSluice } from "./cli-process.js";

const NO_STACK = /\n\s+at /;

describe.concurrent("sluice --help (real processes)", () => {
  it("lists every command and exits 0", async () => {
    const { code, stdout } = await runSluice(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: sluice <command> [options]");
    for (const command of COMMANDS) expect(stdout).toContain(command.name);
    // Where the commands find the catalog: a directory, or PostgreSQL.
    expect(stdout).toContain("--data-dir or SLUICE_DATA_DIR");
    expect(stdout).toContain("--database-url or SLUICE_DATABASE_URL");
  });

  it("--version prints the package's version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    const { code, stdout } = await runSluice(["--version"]);
    expect(code).toBe(0);
    expect(stdout).toBe(`sluice ${version}\n`);
  });

  it("prints the overview on stderr with exit code 2 when no command is given", async () => {
    const { code, stdout, stderr } = await runSluice([]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("Usage: sluice <command>");
  });

  it.each(COMMANDS.map((command) => [command.name]))(
    "sluice %s --help prints its usage, options and examples",
    async (name) => {
      const { code, stdout, stderr } = await runSluice([...name.split(" "), "--help"]);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(stdout).toContain(`Usage: sluice ${name}`);
      expect(stdout).toContain("-h, --help");
      expect(stdout).toContain("Examples:");
      expect(stdout).toContain(`  sluice ${name}`);
    },
  );

  it("sluice help <command> is the same as <command> --help", async () => {
    const viaHelp = await runSluice(["help", "token", "create"]);
    const viaFlag = await runSluice(["token", "create", "-h"]);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    const group = await runSluice(["help", "token"]);
    expect(group.code).toBe(0);
    expect(group.stdout).toContain("token revoke");
  });

  it("sluice help on something that is no command exits 2 and says so", async () => {
    for (const words of [["nope"], ["token", "nope"], ["token", "create", "extra"]]) {
      const { code, stdout, stderr } = await runSluice(["help", ...words]);
      expect([code, stdout]).toEqual([2, ""]);
      expect(stderr).toBe(
        `Error: Unknown command "${words.join(" ")}". Run "sluice --help" for the list of commands.\n`,
      );
    }
  });

  it("a command group without a subcommand lists its commands with exit code 2", async () => {
    const { code, stderr } = await runSluice(["token"]);
    expect(code).toBe(2);
    expect(stderr).toContain("token create");
    expect(stderr).toContain("token revoke");
    expect(stderr).toContain("token list");
  });
});

describe.concurrent("bad usage (real processes)", () => {
  it("an unknown flag exits 2 with a clear message and no stack trace", async () => {
    const { code, stdout, stderr } = await runSluice(["apply", "x.json", "--force"]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe('Error: Unknown option --force. Run "sluice apply --help" for usage.\n');
  });

  it("an unknown command exits 2", async () => {
    const { code, stderr } = await runSluice(["frobnicate"]);
    expect(code).toBe(2);
    expect(stderr).toBe(
      'Error: Unknown command "frobnicate". Run "sluice --help" for the list of commands.\n',
    );
  });

  it("bad serve configuration names the field and its source, exit 2, no stack trace", async () => {
    const { code, stderr } = await runSluice(["serve", "--port", "http"]);
    expect(code).toBe(2);
    expect(stderr).toContain(
      'port: must be a whole number from 0 to 65535 (got "http", from --port)',
    );
    expect(stderr).not.toMatch(NO_STACK);
  });
});

describe("argument parsing (in-process)", () => {
  it.each(COMMANDS.map((command) => [command.name]))(
    "sluice %s --no-such-flag exits 2 and names the flag",
    async (name) => {
      const captured = captureIo();
      expect(await runCli([...name.split(" "), "--no-such-flag"], captured.io)).toBe(2);
      expect(captured.stdout()).toBe("");
      expect(captured.stderr()).toContain("Unknown option --no-such-flag");
      expect(captured.stderr()).toContain(`sluice ${name} --help`);
    },
  );

  it("an unknown option after a command group names the option and the group's help", async () => {
    const captured = captureIo();
    expect(await runCli(["team", "--help-x"], captured.io)).toBe(2);
    expect(captured.stderr().trim()).toBe(
      'Error: Unknown option --help-x. Run "sluice team --help" for the list of commands.',
    );
  });

  it.each(COMMANDS.map((command) => [command.name]))(
    "sluice %s --help fits 100 columns (the usage line and examples stay whole to copy)",
    async (name) => {
      const captured = captureIo();
      expect(await runCli([...name.split(" "), "--help"], captured.io)).toBe(0);
      const help = captured.stdout();
      const examples = help.slice(help.indexOf("\nExamples:"));
      const wide = help
        .slice(0, help.indexOf("\nExamples:"))
        .split("\n")
        .filter((line) => line.length > 100 && !line.startsWith("Usage: "));
      expect(wide).toEqual([]);
      // Wrapped option descriptions continue under the description column.
      const options = help
        .slice(help.indexOf("Options:\n") + 9, help.indexOf("\n\n", help.indexOf("Options:")))
        .split("\n");
      const column = (options.find((line) => line.includes("--help")) ?? "").indexOf(
        "Show this help.",
      );
      for (const line of options.filter((text) => !text.startsWith("  -"))) {
        expect(line.slice(0, column).trim()).toBe("");
        expect(line[column]).not.toBe(" ");
      }
      expect(examples).toContain(`  sluice ${name}`);
    },
  );

  it("missing required flags are named together", async () => {
    const captured = captureIo();
    expect(await runCli(["token", "create", "--team", "acme"], captured.io)).toBe(2);
    expect(captured.stderr()).toContain("Missing --user, --name, --abilities, --lifetime.");
  });

  it("a missing positional argument is named", async () => {
    const captured = captureIo();
    expect(await runCli(["apply"], captured.io)).toBe(2);
    expect(captured.stderr()).toContain("Missing <file.json>.");
  });

  it("an extra positional argument is refused", async () => {
    const captured = captureIo();
    expect(await runCli(["status", "extra"], captured.io)).toBe(2);
    expect(captured.stderr()).toContain('Unexpected argument "extra".');
  });

  it("a string flag without its value is reported", async () => {
    const captured = captureIo();
    expect(await runCli(["status", "--team"], captured.io)).toBe(2);
    expect(captured.stderr()).toContain("Option --team needs a value");
  });

  it("a value that starts with a dash is shown how to pass it", async () => {
    const captured = captureIo();
    expect(await runCli(["status", "--team", "-acme"], captured.io)).toBe(2);
    expect(captured.stderr()).toContain(
      'Option --team needs a value (write --team=<value> for one that starts with "-").',
    );
  });

  it("a negative number after a string flag is its value, checked like any other", async () => {
    const captured = captureIo();
    expect(
      await runCli(["serve", "--port", "-1", "--data-dir", "/tmp/never-made"], captured.io),
    ).toBe(2);
    expect(captured.stderr()).toContain(
      'port: must be a whole number from 0 to 65535 (got "-1", from --port)',
    );
  });

  it("a boolean flag given a value is reported", async () => {
    const captured = captureIo();
    expect(await runCli(["status", "--json=yes"], captured.io)).toBe(2);
    expect(captured.stderr()).toContain("Option --json does not take a value.");
  });
});

describe("output to a closed pipe", () => {
  it("exits normally when the reader is gone (sluice --help | head -1), no stack trace", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "adapters/cli/main.ts", "--help"], {
      cwd: REPO_ROOT,
      env: cliEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Close the read end before the CLI has started, so its first write meets EPIPE.
    child.stdout!.destroy();
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise((resolve) => child.once("close", resolve));
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(stderr).not.toMatch(NO_STACK);
    expect(code).toBe(0);
  });
});
