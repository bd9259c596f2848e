// The page's files: our own (src/console/static) and the three libraries it uses, served from their
// npm packages as they ship (Preact and its hooks, htm, Chart.js), so there is no bundler step.
// hooks.mjs imports the bare name "preact"; it is pointed at our path here (an import map would be
// an inline script, which the page's Content-Security-Policy forbids).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, normalize, sep } from "node:path";
import { packageRoot } from "../install/package-root.js";

const require = createRequire(import.meta.url);

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

// A Map, not an object literal: a name from the URL such as `__proto__` or `constructor` must find nothing.
const VENDOR = new Map<string, () => string>([
  ["preact.mjs", () => require.resolve("preact")],
  ["hooks.mjs", () => require.resolve("preact/hooks")],
  ["htm.mjs", () => join(dirname(require.resolve("htm")), "htm.module.js")],
  ["chart.umd.min.js", () => join(dirname(require.resolve("chart.js")), "chart.umd.min.js")],
]);

export interface Asset {
  type: string;
  body: Buffer | string;
}

const cache = new Map<string, Asset>();

/** `/app/NAME` or `/vendor/NAME`; undefined when there is no such file. */
export async function asset(path: string): Promise<Asset | undefined> {
  const hit = cache.get(path);
  if (hit) return hit;
  let file: string | undefined;
  if (path.startsWith("/vendor/")) file = VENDOR.get(path.slice("/vendor/".length))?.();
  else if (path.startsWith("/app/")) {
    const root = join(packageRoot(), "src", "console", "static");
    const candidate = normalize(join(root, path.slice("/app/".length)));
    if (candidate.startsWith(root + sep)) file = candidate;
  }
  if (!file) return undefined;
  const ext = file.slice(file.lastIndexOf("."));
  let body: Buffer | string = await readFile(file).catch(() => undefined as never);
  if (body === undefined || !Object.hasOwn(TYPES, ext)) return undefined;
  if (path === "/vendor/hooks.mjs") body = body.toString("utf8").replace(/from\s*"preact"/g, 'from"/vendor/preact.mjs"');
  const found = { type: TYPES[ext]!, body };
  cache.set(path, found);
  return found;
}

export async function indexPage(): Promise<Asset> {
  return (await asset("/app/index.html"))!;
}
