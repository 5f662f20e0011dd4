/**
 * Reads a secret for the CLI without it ever being an argument (argv shows in `ps` and in
 * shell history). From a terminal: a prompt on stderr that does not echo; otherwise the
 * whole of stdin (`printf %s "$PW" | sluice user set-password …`), one trailing newline dropped.
 *
 * @example
 * ```ts
 * const password = await readSecretFromStdin("Password: ");
 * ```
 */
export async function readSecretFromStdin(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks)
      .toString("utf8")
      .replace(/\r?\n$/, "");
  }
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding("utf8");
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = "";
      const onData = (text: string) => {
        for (const char of text) {
          if (char === "\r" || char === "\n") {
            stdin.off("data", onData);
            process.stderr.write("\n");
            resolve(typed);
            return;
          }
          if (char === "\u0003") {
            stdin.off("data", onData);
            reject(new Error("Cancelled."));
            return;
          }
          typed = char === "\u007f" || char === "\b" ? typed.slice(0, -1) : typed + char;
        }
      };
      stdin.on("data", onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
  }
}
