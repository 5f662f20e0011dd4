import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The file in a data directory that holds the URL its last `sluice serve` answered at. */
export const SERVER_URL_FILE = "server-url";

/**
 * Notes the URL a server listening on `dataDir` answers at, so the CLI's links point at it
 * (a server started with `--port 8081` or `--port 0` is not at the default port). Best effort:
 * a read-only directory only loses the convenience.
 *
 * @example
 * ```ts
 * recordServerUrl(config.dataDir, listening.url);
 * ```
 */
export function recordServerUrl(dataDir: string, url: string): void {
  try {
    writeFileSync(join(dataDir, SERVER_URL_FILE), `${url}\n`, { mode: 0o644 });
  } catch {
    // Nothing depends on it: the CLI then falls back to SLUICE_BASE_URL or the default port.
  }
}

/**
 * The URL the last server on `dataDir` answered at, or null (none ran there, or the file holds
 * something that is not an http(s) URL).
 *
 * @example
 * ```ts
 * const base = recordedServerUrl("./.sluice-data") ?? "http://localhost:8080";
 * ```
 */
export function recordedServerUrl(dataDir: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(dataDir, SERVER_URL_FILE), "utf8").trim();
  } catch {
    return null;
  }
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : null;
  } catch {
    return null;
  }
}
