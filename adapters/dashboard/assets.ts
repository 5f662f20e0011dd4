import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Hono } from "hono";
import { DASHBOARD_CSS } from "./client/dashboard-css.js";
import { DASHBOARD_JS } from "./client/dashboard-js.js";

/** Path prefix of every dashboard asset; the CSP allows scripts from here only (same origin). */
export const ASSETS_PREFIX = "/assets";

interface Asset {
  type: string;
  body: string;
}

/** A file of an installed package: no CDN, the dashboard works offline. */
function packageFile(specifier: string, type: string): () => Asset {
  let asset: Asset | undefined;
  return () => {
    if (!asset) {
      // `require.resolve` from this module's place in the package (ESM or CommonJS build);
      // `import.meta.url` first, as an ES module can see a global `__filename` (`node -e`).
      const here = typeof import.meta.url === "string" ? import.meta.url : __filename;
      asset = { type, body: readFileSync(createRequire(here).resolve(specifier), "utf8") };
    }
    return asset;
  };
}

const ASSETS: Readonly<Record<string, () => Asset>> = {
  "htmx.min.js": packageFile("htmx.org/dist/htmx.min.js", "text/javascript"),
  "uPlot.iife.min.js": packageFile("uplot/dist/uPlot.iife.min.js", "text/javascript"),
  "uPlot.min.css": packageFile("uplot/dist/uPlot.min.css", "text/css"),
  "dashboard.js": () => ({ type: "text/javascript", body: DASHBOARD_JS }),
  "dashboard.css": () => ({ type: "text/css", body: DASHBOARD_CSS }),
};

const versions = new Map<string, string>();

/**
 * The URL a page links an asset by: its path with a digest of its content (`?v=…`), so a
 * browser holding a day-old copy (they are cached for a day) fetches the new one as soon as
 * Sluice is upgraded, instead of running new pages with the old script and style sheet.
 *
 * @example
 * ```ts
 * assetUrl("dashboard.css"); // "/assets/dashboard.css?v=3f2a9c1e0b7d"
 * ```
 */
export function assetUrl(file: string): string {
  let version = versions.get(file);
  if (version === undefined) {
    const load = ASSETS[file];
    if (!load) throw new Error(`No dashboard asset ${file}.`);
    version = createHash("sha256").update(load().body).digest("hex").slice(0, 12);
    versions.set(file, version);
  }
  return `${ASSETS_PREFIX}/${file}?v=${version}`;
}

/**
 * The dashboard's scripts and styles: htmx and uPlot from their packages' `dist/`, and the
 * dashboard's own script and style sheet. Cached for a day (they change with the package).
 *
 * @example
 * ```ts
 * app.route(ASSETS_PREFIX, assetRoutes());
 * ```
 */
export function assetRoutes(): Hono {
  const routes = new Hono();
  routes.get("/:file", (c) => {
    const load = ASSETS[c.req.param("file")];
    if (!load) return c.text("Not found.", 404);
    const asset = load();
    return c.body(asset.body, 200, {
      "content-type": `${asset.type}; charset=utf-8`,
      "cache-control": "public, max-age=86400",
    });
  });
  return routes;
}
