// OPENCODE_CONDUCTOR_CONSOLE=1: the MCP server starts the console itself, logs its URL, and the
// console goes when the server goes, whether it exits normally or is killed (no process left behind).
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI } from "../support/mcp-client.js";
import { scratchEnv } from "../support/scratch-home.js";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The stdio MCP server with the console on; resolves with the console's URL and pid from its log. */
async function startServer() {
  const stateDir = await mkdtemp(join(tmpdir(), "occ-console-state-"));
  dirs.push(stateDir);
  const child = spawn(process.execPath, [CLI], {
    env: { ...scratchEnv(), OPENCODE_CONDUCTOR_STATE_DIR: stateDir, OPENCODE_CONDUCTOR_CONSOLE: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let log = "";
  const started = await new Promise<{ url: string; pid: number }>((resolve, reject) => {
    child.stderr!.on("data", (c: Buffer) => {
      log += c.toString();
      const m = /web console at (\S+) \(pid (\d+)\)/.exec(log);
      if (m) resolve({ url: m[1]!, pid: Number(m[2]) });
    });
    child.once("exit", (code) => reject(new Error(`MCP server exited (${code}): ${log}`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { child, exited, ...started };
}

async function gone(pid: number): Promise<boolean> {
  // The console notices the closed pipe at once; allow a loaded machine a generous ceiling.
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) if (!alive(pid)) return true;
  return false;
}

describe("OPENCODE_CONDUCTOR_CONSOLE=1", () => {
  it("starts a console that answers, and stops it when the MCP server's stdin closes", async () => {
    const server = await startServer();
    const res = await fetch(server.url, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Strict/);
    server.child.stdin!.end();
    await server.exited;
    expect(await gone(server.pid)).toBe(true);
  });

  it("stops the console when the MCP server is killed", async () => {
    const server = await startServer();
    expect(alive(server.pid)).toBe(true);
    server.child.kill("SIGKILL");
    await server.exited;
    expect(await gone(server.pid)).toBe(true);
  });
});
