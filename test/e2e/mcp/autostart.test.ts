// Without OPENCODE_URL the MCP server starts its own opencode on the first call, and no process is
// left behind: not on a normal exit, and not after a SIGKILL (the next start cleans up). After the
// SIGKILL the check covers every process the MCP server started, as the kernel listed them just
// before: its supervisor, that supervisor's process group, opencode, and what opencode started
// (a shell command of a running turn), not one pid.
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startMcp, type McpSession } from "../../support/mcp-client.js";
import { makeProjectDir, offlineConfig, startOpencode, xdg, type TestOpencode } from "../../support/opencode.js";
import { describeProcesses, killAll, treeWith, untilGone, type ProcessInfo } from "../../support/process-tree.js";
import { text, toolCall } from "../../support/scripted-model.js";

let harness: TestOpencode; // only for its temp home and scripted model; its server is not used
let env: Record<string, string>;
let stateDir: string;
/** Every process a test saw below an MCP server, killed after the file if a test failed and left one. */
const seen: ProcessInfo[] = [];

beforeAll(async () => {
  harness = await startOpencode();
  const project = await makeProjectDir(harness, "auto");
  stateDir = join(harness.root, "state");
  env = {
    OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
    OPENCODE_CONDUCTOR_DIRECTORY: project,
    ...xdg(harness.home),
    OPENCODE_CONFIG_CONTENT: JSON.stringify(offlineConfig(harness.model.baseURL)),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    npm_config_registry: "http://127.0.0.1:9/",
  };
});
// A test that failed must not leave its turn's steps for the next one.
afterEach(() => harness.model.clear());
afterAll(async () => {
  killAll(seen); // only if a test failed
  await harness?.stop();
});

async function autoStartedPid(mcp: McpSession): Promise<number> {
  const status = await mcp.call("oc_status");
  expect(status.isError, status.text).toBe(false);
  expect(status.data.version).toBe("1.18.33");
  expect((status.data.connection as { mode: string }).mode).toBe("auto-started");
  // Handed over once opencode had loaded its providers (the first call's own timeout is for answering).
  expect(JSON.stringify(status.data.connection)).toMatch(/providers loaded in \d+\.\d s/);
  const rows = JSON.parse(readFileSync(join(stateDir, "instances.json"), "utf8")).instances as Array<{ pid: number; url: string }>;
  const row = rows.find((r) => status.text.includes(r.url));
  expect(row).toBeDefined();
  return row!.pid;
}

describe("auto-start", () => {
  it("starts opencode on the first call and stops it, and what it started, on a normal exit", async () => {
    const mcp = await startMcp(env);
    const pid = await autoStartedPid(mcp);
    const tree = await underShellCommand(mcp);
    expect(tree.map((p) => p.pid)).toContain(pid);
    const scratch = tmpdirOf(pid);
    await mcp.close();
    expect(describeProcesses(await untilGone(tree, 30_000))).toBe("");
    // What opencode unpacked into its temp folder went with it.
    expect(existsSync(scratch)).toBe(false);
  });

  it("after a SIGKILL of the MCP server, every process it started is gone within 2 s (its supervisor saw the conductor go)", async () => {
    const first = await startMcp(env);
    const pid = await autoStartedPid(first);
    const tree = await underShellCommand(first);
    expect(tree.map((p) => p.pid)).toContain(pid);
    const scratch = tmpdirOf(pid);
    process.kill(first.transport.pid!, "SIGKILL");
    const killedAt = Date.now();
    const left = await untilGone(tree, 10_000);
    expect(describeProcesses(left)).toBe("");
    expect(Date.now() - killedAt).toBeLessThan(2_000);
    expect(existsSync(scratch)).toBe(false); // the supervisor removed it as opencode went
    // The next start finds the registry row of the dead conductor and clears it.
    const second = await startMcp(env);
    await second.close();
  });
});

/**
 * opencode's TMPDIR, as the kernel shows its environment: a folder of its own inside ours (opencode
 * unpacks native libraries there, and would leave them in /tmp were it started without TMPDIR).
 */
function tmpdirOf(pid: number): string {
  const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  const dir = environ.find((e) => e.startsWith("TMPDIR="))?.slice("TMPDIR=".length) ?? "";
  expect(basename(dir)).toMatch(/^occ-opencode-/);
  expect(existsSync(dir)).toBe(true);
  return dir;
}

/**
 * Starts a turn that runs a long shell command (opencode runs it in a process group of its own)
 * and returns every process below the MCP server once the command runs: the supervisor, opencode,
 * the shell and its `sleep`.
 */
async function underShellCommand(mcp: McpSession) {
  harness.model.queue(toolCall("bash", { command: "sleep 300", description: "a long command" }), text("never"));
  const started = await mcp.call("oc_delegate", { task: "run a long command", permissions: "auto", wait: false });
  expect(started.data.status, started.text).toBe("running");
  const tree = await treeWith(mcp.transport.pid!, (p) => p.command === "sleep");
  seen.push(...tree);
  return tree;
}
