#!/usr/bin/env node
import { type CliIo, PROCESS_SIGNALS } from "./command.js";
import { readSecretFromStdin } from "./read-secret.js";
import { runCli } from "./run-cli.js";

/**
 * A line writer that goes quiet once the reader is gone (`sluice status | head -2`): EPIPE
 * means nobody reads any more, which is no reason to crash with a stack trace, nor, for
 * `serve`, to skip a graceful shutdown.
 */
function lineWriter(stream: NodeJS.WriteStream): (line: string) => void {
  let open = true;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    open = false;
  });
  return (line) => {
    if (open) stream.write(`${line}\n`);
  };
}

const io: CliIo = {
  out: lineWriter(process.stdout),
  err: lineWriter(process.stderr),
  env: process.env,
  signals: PROCESS_SIGNALS,
  exitNow: (code) => process.exit(code),
  readSecret: readSecretFromStdin,
};

// No top-level await: the entry must also build as CommonJS.
void runCli(process.argv.slice(2), io).then((code) => {
  process.exitCode = code;
});
