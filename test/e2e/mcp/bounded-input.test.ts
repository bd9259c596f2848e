// Garbage in, bounded out: a 2 MB string in a field of every tool (and as the prompt itself of the
// tools that prompt: `task`, `message`, `question`), sent over stdio as a client sends it, gets
// the error that names what was wrong: text under 1 KB, no stack trace, structured content and
// audit line under 4 KB, while an oc_status call beside it still answers. How long each call takes
// and stalls the event loop is measured by `npm run bench:bounded` (test/support/bounded-input.ts
// has the calls), not here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOUNDED_CALLS } from "../../support/bounded-input.js";
import { startMcpFor, type McpSession } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";

let server: TestOpencode;
let mcp: McpSession;
let auditPath: string;

beforeAll(async () => {
  server = await startOpencode();
  auditPath = join(server.root, "audit.jsonl");
  mcp = await startMcpFor(server, {
    OPENCODE_CONDUCTOR_TOOLSETS: "all",
    OPENCODE_CONDUCTOR_STATE_DIR: join(server.root, "state"),
    OPENCODE_CONDUCTOR_AUDIT: auditPath,
  });
  expect((await mcp.call("oc_status")).isError).toBe(false);
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

describe("a 2 MB argument to every tool, over stdio", () => {
  it("covers every tool of the full set", async () => {
    const { tools } = await mcp.client.listTools();
    expect(new Set(BOUNDED_CALLS.map((c) => c.tool))).toEqual(new Set(tools.map((t) => t.name)));
  });

  it.each(BOUNDED_CALLS)("$name: the error that names it, under 1 KB; structured content and audit line under 4 KB", async (c) => {
    const [result, beside] = await Promise.all([mcp.call(c.tool, c.args), mcp.call("oc_status")]);
    if (c.inTask) {
      // The batch answers; its one task is the error.
      expect(result.isError, result.text.slice(0, 300)).toBe(false);
      const [task] = result.data.results as Array<{ status: string; error: { message: string } }>;
      expect(task!.status).toBe("error");
      expect(task!.error.message).toMatch(c.error);
    } else {
      expect(result.isError, result.text.slice(0, 300)).toBe(true);
      expect(result.text).toMatch(c.error);
    }
    expect(result.text.length, result.text.slice(0, 300)).toBeLessThan(1_024);
    expect(result.text).not.toMatch(/\n\s+at /);
    expect(result.text).not.toMatch(/Cannot reach opencode|HTTP 4(13|14|31)/);
    expect(JSON.stringify(result.raw.structuredContent ?? {}).length).toBeLessThan(4_096);
    expect(beside.isError, beside.text.slice(0, 300)).toBe(false);
    const lines = readFileSync(auditPath, "utf8").trim().split("\n");
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(4_096);
  });

  it("reached the model with none of them: no prompt was sent", () => {
    expect(server.model.requests.filter((r) => r.kind === "chat")).toEqual([]);
  });
});
