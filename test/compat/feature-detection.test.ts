// Feature detection against a real old release that lacks an operation a high-level tool needs:
// opencode 1.1.11 has no app.skills (GET /skill), which oc_catalog {kind: "skills"} reads. Without
// detection that request would reach the release's catch-all route, which proxies to the web app
// (offline, v2 routes on 1.1.65 and 1.3.2 answered HTTP 500 "Unable to connect"); with it the tool
// answers the version-specific error and sends nothing.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstTestedWith } from "../../src/core/engine/server/compatibility.js";
import { startMcpFor, type McpSession } from "../support/mcp-client.js";
import type { TestOpencode } from "../support/opencode.js";
import { release } from "./targets.js";

const OLD = "1.1.11";
let server: TestOpencode;
let mcp: McpSession;

beforeAll(async () => {
  server = await release(OLD).start({});
  mcp = await startMcpFor(server, { OPENCODE_CONDUCTOR_AUDIT: "off", OPENCODE_CONDUCTOR_STATE_DIR: join(server.root, "state") });
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

describe(`feature detection on opencode ${OLD}`, () => {
  it("oc_catalog skills answers that this release has no app.skills, naming the first tested release with it", async () => {
    const since = firstTestedWith("app.skills");
    expect(since).toMatch(/^1\.\d+\.\d+$/);
    const r = await mcp.call("oc_catalog", { kind: "skills" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(
      `opencode ${OLD} has no operation app.skills (GET /skill), so nothing was sent. The oldest tested opencode release that has it is ${since}.`,
    );
  });

  it("what the release has still works, and oc_status places it outside the tested range", async () => {
    const agents = await mcp.call("oc_catalog", { kind: "agents" });
    expect(agents.isError, agents.text).toBe(false);
    const status = await mcp.call("oc_status");
    expect(status.isError, status.text).toBe(false);
    expect(status.data.version).toBe(OLD);
    expect(status.data.compatibility).toMatchObject({
      verdict: expect.stringMatching(/^older than the tested range/),
      spec: { same_as_pinned: false, missing: expect.any(Number) },
    });
    expect((status.data.compatibility as { spec: { missing: number } }).spec.missing).toBeGreaterThan(50);
  });
});
