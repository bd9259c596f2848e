// Garbage in, bounded out: a 2 MB string in a field of every tool gets an error text under 1 KB,
// structured content under 4 KB and an audit line under 4 KB, while an oc_status call beside it
// still answers. How long each call takes and stalls the event loop is measured by
// `npm run bench:bounded` (test/support/bounded-input.ts has the calls), not here.
import { readFileSync } from "node:fs";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOUNDED_CALLS, inProcessMcp, textOf, type InProcessMcp } from "../../support/bounded-input.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";

let server: TestOpencode;
let mcp: InProcessMcp;
/** Tools whose 2 MB value would have gone to opencode in a URL or header, refused before sending. */
const tooLarge: string[] = [];

beforeAll(async () => {
  server = await startOpencode();
  mcp = await inProcessMcp(server);
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

describe("a 2 MB argument to every tool", () => {
  it("lists every tool of the full set here", async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(BOUNDED_CALLS).sort());
  });

  it.each(Object.entries(BOUNDED_CALLS))("%s: error under 1 KB, structured content and audit line under 4 KB", async (name, args) => {
    const [result, beside] = await Promise.all([
      mcp.client.callTool({ name, arguments: args }) as Promise<CallToolResult>,
      mcp.client.callTool({ name: "oc_status", arguments: {} }) as Promise<CallToolResult>,
    ]);
    const text = textOf(result);
    expect(text.length, text.slice(0, 300)).toBeLessThan(1_024);
    expect(text).not.toMatch(/\n\s+at /);
    // A value that would pass opencode's request size limit is refused before sending, named as too long.
    if (/far too long: shorten it/.test(text)) tooLarge.push(name);
    expect(text).not.toMatch(/Cannot reach opencode|HTTP 4(13|14|31)/);
    expect(JSON.stringify(result.structuredContent ?? {}).length).toBeLessThan(4_096);
    expect(beside.isError, textOf(beside).slice(0, 300)).toBeFalsy();
    const lines = readFileSync(mcp.auditPath, "utf8").trim().split("\n");
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(4_096);
  });

  it("refused before sending: exactly the values that travel in the URL or headers (a request id, a search, a directory)", () => {
    expect(tooLarge.sort()).toEqual(["oc_answer", "oc_sessions", "oc_status"]);
  });
});
