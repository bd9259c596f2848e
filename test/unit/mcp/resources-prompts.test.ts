// Resources and prompts of the MCP server, through the SDK's client: the delegation prompts expand
// to the tool calls they name, the audit trail reads as a resource only with the audit toolset, a
// bad session URI gets a clear error, and none of it touches tools/list.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import type { Conductor } from "../../../src/core/conductor.js";
import { createServer } from "../../../src/mcp/server.js";

const dir = mkdtempSync(join(tmpdir(), "occ-resources-"));
const auditPath = join(dir, "audit.jsonl");
writeFileSync(auditPath, `${JSON.stringify({ time: "2026-01-01T00:00:00.000Z", tool: "oc_delegate", outcome: "done", session_id: "ses_a" })}\n`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function connect(toolsets?: string): Promise<Client> {
  const config = loadConfig({
    OPENCODE_URL: "http://127.0.0.1:9",
    OPENCODE_CONDUCTOR_STATE_DIR: dir,
    OPENCODE_CONDUCTOR_AUDIT: auditPath,
    ...(toolsets ? { OPENCODE_CONDUCTOR_TOOLSETS: toolsets } : {}),
  });
  const server = createServer({ config, conductor: async () => ({}) as Conductor });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "unit", version: "0" });
  await client.connect(b);
  return client;
}

describe("prompts", () => {
  it("lists the delegation prompts and expands them to the tool calls they name", async () => {
    const c = await connect();
    expect((await c.listPrompts()).prompts.map((p) => p.name)).toEqual(["review_in_parallel", "fix_with_checks", "migrate_in_batches", "walk_workflow"]);
    const review = await c.getPrompt({ name: "review_in_parallel", arguments: { paths: "src/a.ts, src/b.ts", focus: "error handling" } });
    const text = (review.messages[0]!.content as { text: string }).text;
    expect(text).toContain("oc_delegate_parallel");
    expect(text).toContain('"task":"Review src/a.ts for error handling.');
    expect(text).toContain('"permissions":"readonly"');
    const fix = await c.getPrompt({ name: "fix_with_checks", arguments: { task: "Fix the flaky test", check: "npm test" } });
    expect((fix.messages[0]!.content as { text: string }).text).toContain(
      'oc_delegate with {"task":"Fix the flaky test","checks":["npm test"],"max_rounds":3}',
    );
    const migrate = await c.getPrompt({
      name: "migrate_in_batches",
      arguments: { instruction: "Use node:fs/promises", files: "a.ts,b.ts,c.ts", batch_size: "2" },
    });
    expect((migrate.messages[0]!.content as { text: string }).text).toMatch(
      /Migrate in 2 batches[\s\S]*1\. oc_delegate_parallel[\s\S]*2\. oc_delegate_parallel/,
    );
    await c.close();
  });
});

describe("resources", () => {
  it("offers session transcript, diff, todo and worktree patch templates and the pages of cut answers; the audit trail only with the audit toolset", async () => {
    const all = await connect("all");
    expect((await all.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "opencode://session/{session_id}/transcript",
      "opencode://session/{session_id}/diff",
      "opencode://session/{session_id}/todo",
      "opencode://session/{session_id}/patch",
      // The pages of an answer cut to its budget (answer-budget.ts), whatever the toolsets.
      "opencode://answer/{answer_id}/{part}/{page}",
    ]);
    await expect(all.readResource({ uri: "opencode://session/ses_a/patch" })).rejects.toThrow(/keeps no worktree tasks/);
    const audit = await all.readResource({ uri: "opencode://audit" });
    expect(JSON.parse((audit.contents[0] as { text: string }).text)).toEqual([expect.objectContaining({ tool: "oc_delegate", session_id: "ses_a" })]);
    await expect(all.readResource({ uri: "opencode://session/nope/diff" })).rejects.toThrow(/expected opencode:\/\/session\/ses_…\/diff/);
    await all.close();

    const defaults = await connect();
    await expect(defaults.readResource({ uri: "opencode://audit" })).rejects.toThrow(/not found/i);
    await defaults.close();
  });
});
