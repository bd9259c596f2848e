// The package's entries, as a program imports them by name (built dist/, resolved through
// package.json `exports`): the main entry does not load BullMQ or ioredis (only the fleet needs
// them), and "opencode-conductor/fleet" has TaskQueue and FleetWorker. Every package a fresh node
// process resolves while importing is recorded by a module resolve hook.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

// Posts every resolved URL to the main thread (hooks run on their own thread).
const HOOKS = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  port.postMessage(resolved.url);
  return resolved;
}`;

/** The packages (node_modules names) resolved while a fresh node imports `entry`, and the entry's export names. */
async function load(entry: string): Promise<{ packages: string[]; exports: string[] }> {
  const script = `
import { register } from "node:module";
import { MessageChannel } from "node:worker_threads";
const { port1, port2 } = new MessageChannel();
const urls = [];
port1.on("message", (url) => urls.push(url));
register("data:text/javascript,${encodeURIComponent(HOOKS)}", { data: { port: port2 }, transferList: [port2] });
const mod = await import(${JSON.stringify(entry)});
// The hook thread's last messages arrive after the import settles: one more turn of the loop.
await new Promise((resolve) => setImmediate(resolve));
const packages = [...new Set(urls.flatMap((u) => { const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(u); return m ? [m[1]] : []; }))];
console.log(JSON.stringify({ packages, exports: Object.keys(mod) }));
port1.close();`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, timeout: 60_000 });
  return JSON.parse(stdout) as { packages: string[]; exports: string[] };
}

beforeAll(() => {
  if (!existsSync(`${ROOT}dist/index.js`) || !existsSync(`${ROOT}dist/fleet.js`)) throw new Error("dist/ is missing or old: run `npm run build` first.");
});

describe("package entries", () => {
  it('"opencode-conductor" loads neither bullmq nor ioredis', async () => {
    const main = await load("opencode-conductor");
    expect(main.exports).toEqual(expect.arrayContaining(["Conductor", "connect", "createServer"]));
    expect(main.packages).toContain("openapi-fetch"); // the hook sees the entry's own packages
    expect(main.packages).not.toContain("bullmq");
    expect(main.packages).not.toContain("ioredis");
    expect(main.exports).not.toContain("TaskQueue");
  });

  it('"opencode-conductor/fleet" has the queue and the worker', async () => {
    const fleet = await load("opencode-conductor/fleet");
    expect(fleet.exports.sort()).toEqual(["FleetWorker", "TaskQueue"]);
    expect(fleet.packages).toEqual(expect.arrayContaining(["bullmq", "ioredis"]));
  });
});
