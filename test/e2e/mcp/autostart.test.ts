// Without OPENCODE_URL the MCP server starts its own opencode on the first call, and no process is
// left behind: not on a normal exit, and not after a SIGKILL (the next start cleans up).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcp, type McpSession } from "../../support/mcp-client.js";
import { makeProjectDir, offlineConfig, startOpencode, xdg, type TestOpencode } from "../../support/opencode.js";

let harness: TestOpencode; // only for its temp home and scripted model; its server is not used
let env: Record<string, string>;
let stateDir: string;
const started: number[] = [];

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
afterAll(async () => {
  for (const pid of started) if (isAlive(pid)) process.kill(pid, "SIGKILL"); // only if a test failed
  await harness?.stop();
});

async function autoStartedPid(mcp: McpSession): Promise<number> {
  const status = await mcp.call("oc_status");
  expect(status.isError, status.text).toBe(false);
  expect(status.data.version).toBe("1.18.33");
  expect((status.data.connection as { mode: string }).mode).toBe("auto-started");
  const rows = JSON.parse(readFileSync(join(stateDir, "instances.json"), "utf8")).instances as Array<{ pid: number; url: string }>;
  const row = rows.find((r) => status.text.includes(r.url));
  expect(row).toBeDefined();
  started.push(row!.pid);
  return row!.pid;
}

describe("auto-start", () => {
  it("starts opencode on the first call and stops it on a normal exit", async () => {
    const mcp = await startMcp(env);
    const pid = await autoStartedPid(mcp);
    expect(isAlive(pid)).toBe(true);
    await mcp.close();
    await until(() => !isAlive(pid));
    expect(isAlive(pid)).toBe(false);
  });

  it("after a SIGKILL of the MCP server, its opencode dies within 2 s (its supervisor saw the conductor go)", async () => {
    const first = await startMcp(env);
    const pid = await autoStartedPid(first);
    process.kill(first.transport.pid!, "SIGKILL");
    const killedAt = Date.now();
    await until(() => !isAlive(pid), 10_000);
    expect(isAlive(pid)).toBe(false);
    expect(Date.now() - killedAt).toBeLessThan(2_000);
    // The next start finds the registry row of the dead conductor and clears it.
    const second = await startMcp(env);
    await second.close();
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A bounded wait for a process state we cannot subscribe to. */
async function until(done: () => boolean, ceilingMs = 30_000): Promise<void> {
  const deadline = Date.now() + ceilingMs;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}
