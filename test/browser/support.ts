// What the console's browser tests share: Debian's chromium driven by playwright-core (never a
// browser download), the console started through the real CLI, and a record of every HTTP response
// the browser got, so a test can grep them all for secrets.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium, type Browser, type Page } from "playwright-core";
import { CLI } from "../support/mcp-client.js";
import { xdg } from "../support/opencode.js";
import { registerRoot, unregisterRoot } from "../support/registry.js";
import { scratchEnv } from "../support/scratch-home.js";

const CANDIDATES = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter((p): p is string => Boolean(p));

/** The chromium binary, or an error that says how to get it (the suite fails: never a silent skip). */
export function chromiumPath(): string {
  const found = CANDIDATES.find((p) => existsSync(p));
  if (found) return found;
  throw new Error(
    `The browser tests need Chromium and found none at ${CANDIDATES.join(", ")}. Install Debian's package: \`sudo apt-get install -y chromium\` (scripts/test-prereqs.sh does it when run as root), or set CHROMIUM_PATH.`,
  );
}

/**
 * Headless Chromium with a HOME, XDG dirs and TMPDIR of its own (it writes ~/.config/chromium and
 * ~/.cache/dconf otherwise), removed once the browser is gone. TMPDIR is the home itself, and
 * named short: Chromium puts a Unix socket in it, whose path may not pass 107 characters.
 */
export async function launchBrowser(): Promise<Browser> {
  const home = await realpath(await mkdtemp(join(tmpdir(), "ch-")));
  registerRoot(home);
  const remove = () => {
    rmSync(home, { recursive: true, force: true, maxRetries: 3 });
    unregisterRoot(home);
  };
  try {
    // --no-sandbox: CI runs as root, where Chromium's own sandbox refuses to start.
    const browser = await chromium.launch({
      executablePath: chromiumPath(),
      headless: true,
      args: ["--no-sandbox", "--disable-dev-shm-usage"],
      env: { ...process.env, ...xdg(home), TMPDIR: home },
    });
    browser.once("disconnected", remove);
    return browser;
  } catch (error) {
    remove();
    throw error;
  }
}

export interface ConsoleProcess {
  url: string;
  origin: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `opencode-conductor console` (the built CLI) with this environment; resolves once it printed its URL. */
export async function startConsoleCli(env: Record<string, string>): Promise<ConsoleProcess> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first.`);
  const child = spawn(process.execPath, [CLI, "console"], {
    env: { ...scratchEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`console exited (${code}): ${stderr}`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    url,
    origin: new URL(url).origin,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

export interface Recorded {
  url: string;
  status: number;
  body: string;
}

/** Keeps every response of the page (bodies of streams included, as far as they got). */
export function recordResponses(page: Page): Recorded[] {
  const seen: Recorded[] = [];
  page.on("response", (response) => {
    void response
      .text()
      .catch(() => "")
      .then((body) => seen.push({ url: response.url(), status: response.status(), body: `${JSON.stringify(response.headers())}\n${body}` }));
  });
  return seen;
}
