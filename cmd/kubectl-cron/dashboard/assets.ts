// The page's files: its script (web/main.ts and preact, bundled for the browser by esbuild) and style. The built
// plugin (hack/build-plugin.ts) carries them inside, bundled when the plugin was; run from its TypeScript, the
// plugin bundles them on start (~0.2 s, esbuild is installed with the project). Nothing is fetched at run time.
import { readFile } from "node:fs/promises";
import { join, relative } from "node:path";

/** Set by hack/build-plugin.ts: the page's script and style, bundled with the plugin (strings: inlined here only). */
declare const DASHBOARD_SCRIPT: string | undefined;
declare const DASHBOARD_STYLE: string | undefined;

interface PageAssets {
  script: string;
  style: string;
}

/**
 * The page's script and style, bundled from web/ (what hack/build-plugin.ts calls too), and the files they were
 * built from (relative to the working directory).
 */
export async function bundlePage(): Promise<PageAssets & { inputs: string[] }> {
  // Read here, not when the module loads: the single executable's CommonJS bundle has no import.meta (and never
  // comes here: it carries the page).
  const WEB = join(import.meta.dirname, "web");
  const { build } = await import("esbuild");
  const result = await build({
    metafile: true,
    entryPoints: [join(WEB, "main.ts")],
    bundle: true,
    write: false,
    platform: "browser",
    format: "iife",
    target: "es2022",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
  });
  const script = result.outputFiles[0]!.text;
  const stylePath = join(WEB, "style.css");
  const style = await readFile(stylePath, "utf8");
  return { script, style, inputs: [...Object.keys(result.metafile.inputs), relative(process.cwd(), stylePath)] };
}

/** The page's files: the ones built into the plugin, or bundled now. */
export async function pageAssets(): Promise<PageAssets> {
  if (typeof DASHBOARD_SCRIPT !== "undefined" && typeof DASHBOARD_STYLE !== "undefined") {
    return { script: DASHBOARD_SCRIPT, style: DASHBOARD_STYLE };
  }
  const { script, style } = await bundlePage();
  return { script, style };
}

/** The page: its style and script, each asked for with the token (the server answers nothing without it). */
export function pageHTML(token: string): string {
  const t = encodeURIComponent(token);
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>kubectl cron dashboard</title>` +
    `<link rel="stylesheet" href="/app.css?token=${t}"></head>` +
    `<body><div id="app"></div><script src="/app.js?token=${t}"></script></body></html>\n`
  );
}
