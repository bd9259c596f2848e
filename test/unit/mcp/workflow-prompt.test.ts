// The walk_workflow prompt: a project's workflow expanded to one tool call per step, in order,
// with the inputs filled in and the sign-off left to the person; a missing input is refused.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import type { Conductor } from "../../../src/core/conductor.js";
import { createServer } from "../../../src/mcp/server.js";

const dir = mkdtempSync(join(tmpdir(), "occ-wf-prompt-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, ".opencode", "workflows"), { recursive: true });
writeFileSync(
  join(dir, ".opencode", "workflows", "fix.yaml"),
  `name: fix
inputs:
  bug: {}
  packages: { default: "a,b" }
steps:
  - { name: implement, kind: agent, prompt: "Fix {{inputs.bug}}", model: fake/scripted }
  - { name: each, kind: agent, prompt: "Tidy {{item}}", each: packages }
  - { name: tests, kind: check, run: npm test, on_fail: implement }
  - { name: review, kind: review, of: implement }
  - { name: sign-off, kind: approval, message: "Ship the fix for {{inputs.bug}}?" }
`,
);

async function connect(): Promise<Client> {
  const config = loadConfig({ OPENCODE_URL: "http://127.0.0.1:9", OPENCODE_CONDUCTOR_STATE_DIR: dir, OPENCODE_CONDUCTOR_DIRECTORY: dir });
  const server = createServer({ config, conductor: async () => ({}) as Conductor });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "unit", version: "0" });
  await client.connect(b);
  return client;
}

describe("walk_workflow", () => {
  it("expands each step to its tool call, in order, and leaves the sign-off to the person", async () => {
    const c = await connect();
    const r = await c.getPrompt({ name: "walk_workflow", arguments: { workflow: "fix", inputs: "bug=the crash" } });
    const text = (r.messages[0]!.content as { text: string }).text;
    expect(text).toContain('1. implement (agent): oc_delegate {"task":"Fix the crash","model":"fake/scripted"}');
    expect(text).toContain('2. each (agent): oc_delegate_parallel {"tasks":[{"task":"Tidy a"},{"task":"Tidy b"}]}');
    expect(text).toContain('3. tests (check): run "npm test"');
    expect(text).toContain('send the output back to "implement" with oc_send, at most 2 times');
    expect(text).toMatch(/4\. review \(review\): oc_delegate .*"permissions":"readonly"/);
    expect(text).toContain('5. sign-off (approval): ask me: "Ship the fix for the crash?"');
    expect(text).toContain("never approve for me");
    await expect(c.getPrompt({ name: "walk_workflow", arguments: { workflow: "fix" } })).rejects.toThrow('needs the input "bug"');
    await c.close();
  });
});
