#!/usr/bin/env node
import { type CliIo, PROCESS_SIGNALS } from "./command.js";
import { runCli } from "./run-cli.js";

const io: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  signals: PROCESS_SIGNALS,
};

// No top-level await: the entry must also build as CommonJS.
void runCli(process.argv.slice(2), io).then((code) => {
  process.exitCode = code;
});
