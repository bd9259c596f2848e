// The console line oc_status and the server's startup log print runs as printed: from this
// checkout it is `node …/dist/cli.js console --open` (npx only when the server was started by
// npx), with the state dir named when it was set. Run here through sh exactly as printed: the
// console listens, prints its URL and opens it (xdg-open is a stub that records what it got).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { consoleCommandLine } from "../../../src/console/console-command-line.js";
import { CLI } from "../../support/mcp-client.js";
import { scratchEnv } from "../../support/scratch-home.js";

const dir = mkdtempSync(join(tmpdir(), "occ-console-line-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the console command line", () => {
  it("names this installation's command: from a clone, node and its dist/cli.js; npx only under npx", () => {
    expect(consoleCommandLine({ OPENCODE_CONDUCTOR_STATE_DIR: "/s d" }, { command: "node", args: ["/a b/dist/cli.js"], how: "clone" })).toBe(
      'OPENCODE_CONDUCTOR_STATE_DIR="/s d" node "/a b/dist/cli.js" console --open',
    );
    expect(consoleCommandLine({}, { command: "npx", args: ["-y", "opencode-conductor"], how: "npx" })).toBe("npx -y opencode-conductor console --open");
    expect(consoleCommandLine({}, { command: "opencode-conductor", args: [], how: "global" })).toBe("opencode-conductor console --open");
    expect(consoleCommandLine({ PATH: process.env.PATH })).toBe(`node ${CLI} console --open`);
  });

  it("runs as printed: the console listens and opens its URL", async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
    const bin = join(dir, "bin");
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, "node"));
    const opened = join(dir, "opened");
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\necho "$1" > ${JSON.stringify(opened)}\n`, { mode: 0o755 });
    const stateDir = join(dir, "state");
    const line = consoleCommandLine({ OPENCODE_CONDUCTOR_STATE_DIR: stateDir, PATH: process.env.PATH });
    const child = spawn("sh", ["-c", line], { env: { ...scratchEnv(), PATH: `${bin}:/usr/bin:/bin` }, stdio: ["pipe", "pipe", "pipe"], detached: true });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once("line", resolve);
        child.once("exit", (code) => reject(new Error(`"${line}" exited ${code}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/);
      // The token signs in (a cookie, then the page without the token in the URL).
      expect(await fetch(url, { redirect: "manual" }).then((r) => r.status)).toBeLessThan(400);
      await expect.poll(() => (existsSync(opened) ? readFileSync(opened, "utf8").trim() : ""), { timeout: 30_000 }).toBe(url);
    } finally {
      process.kill(-child.pid!, "SIGTERM");
    }
  });
});
