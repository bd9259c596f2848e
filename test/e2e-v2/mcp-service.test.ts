// Zero-config through the MCP server: with no OPENCODE_URL and a 2.x service discovery file (written
// here, in a temp XDG state dir, for a running 2.x server), the stdio MCP server finds the service
// and oc_status reports it, its engine and how it was found; the password never appears.
// Needs the v2 engine (oc_status on a 2.x server).
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startMcp, type McpSession } from "../support/mcp-client.js";
import type { TestOpencode } from "../support/opencode.js";
import { startOpencode2 } from "../support/opencode2.js";
import { registerRoot, unregisterRoot } from "../support/registry.js";

let server: TestOpencode;
let root: string;
let mcp: McpSession;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "occ-mcp-service-"));
  registerRoot(root);
  server = await startOpencode2();
  const file = join(root, "state", "opencode", "service.json");
  await mkdir(join(root, "state", "opencode"), { recursive: true });
  await writeFile(file, JSON.stringify({ id: "5b9e7d4c-1a2f-4e3b-8c6d-0f1e2d3c4b5a", url: server.url, pid: server.pid, password: server.password }), {
    mode: 0o600,
  });
  await chmod(file, 0o600);
  mcp = await startMcp({
    XDG_STATE_HOME: join(root, "state"),
    OPENCODE_CONDUCTOR_STATE_DIR: join(root, "conductor-state"),
    OPENCODE_CONDUCTOR_DIRECTORY: server.directory,
    OPENCODE_CONDUCTOR_AUDIT: "off",
  });
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
  await rm(root, { recursive: true, force: true });
  unregisterRoot(root);
});

it("oc_status: the service from its discovery file, found with zero configuration", async () => {
  const status = await mcp.call("oc_status");
  expect(status.isError, status.text).toBe(false);
  expect(status.data).toMatchObject({ url: server.url, healthy: true, connection: { mode: "discovered" } });
  expect(String(status.data.version)).toMatch(/^2\./);
  const steps = (status.data.connection as { steps: Array<{ step: string; result: string }> }).steps;
  expect(steps.map((s) => s.step)).toEqual(["options", "env", "service"]);
  expect(steps[2]!.result).toContain(`background service at ${server.url}/ (pid ${server.pid}) from ${join(root, "state", "opencode", "service.json")}`);
  expect(JSON.stringify(status.raw)).not.toContain(server.password);
});
