// Claude Code 2.1.332 (npm, pinned) drives our server the way docs/clients.md says: `claude mcp add`
// (stdio, and HTTP with a bearer token), `claude mcp list`, then `claude -p` in which its model calls
// oc_status and oc_delegate against a real opencode whose agent writes a file. Offline: Claude Code's
// model is the scripted Anthropic Messages API of test/support/llm-api.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../src/client/connect.js";
import { FASTEST_HUMAN_MS } from "../../src/mcp/elicit.js";
import { anthropicMessages } from "../support/llm-api/anthropic.js";
import { expectDelegated, startScene, type Scene } from "../support/client-scene.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { clientBin, clientEnv, docSnippet, localize, run, shellWords } from "../support/real-clients.js";
import { text, toolCall } from "../support/scripted-model.js";

let oc: TestOpencode;
let claude: string;

beforeAll(async () => {
  [oc, claude] = await Promise.all([startOpencode(), clientBin("claude")]);
});
afterAll(async () => {
  await oc?.stop();
});

function env(scene: Scene): Record<string, string> {
  return clientEnv(scene.home, {
    ANTHROPIC_BASE_URL: scene.api.url,
    ANTHROPIC_API_KEY: "sk-ant-scripted",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ENABLE_TOOL_SEARCH: "false",
  });
}

/** Runs each line of a docs snippet that starts with `claude`, made local. */
async function runSnippet(scene: Scene, heading: string) {
  const results = [];
  for (const line of localize(docSnippet(heading), scene.values).split("\n").filter((l) => l.startsWith("claude "))) {
    const [, ...args] = shellWords(line);
    results.push({ line, ...(await run(claude, args, { env: env(scene), cwd: scene.oc.directory, timeoutMs: 120_000 })) });
  }
  return results;
}

describe.each(["stdio", "http"] as const)("Claude Code over %s", (transport) => {
  let scene: Scene;
  beforeAll(async () => {
    scene = await startScene(oc, anthropicMessages, transport, `claude-${transport}`);
  });
  afterAll(async () => {
    await scene?.close();
  });

  it("mcp add from docs/clients.md, mcp list says Connected, claude -p delegates and a real file is written", async () => {
    const [add, list] = await runSnippet(scene, transport === "stdio" ? "Claude Code over stdio" : "Claude Code over HTTP");
    expect(add!.code, add!.stderr).toBe(0);
    expect(list!.code, list!.stderr).toBe(0);
    expect(list!.stdout).toMatch(/opencode: .*✔ Connected/);

    const [headless] = await runSnippet(scene, "Claude Code headless (`claude -p`)");
    await expectDelegated(scene, headless!);
  });
});

describe("claude -p and an approval (nobody there to answer it)", () => {
  let asking: TestOpencode;
  let scene: Scene;
  beforeAll(async () => {
    asking = await startOpencode({ permission: { bash: "ask" } });
    scene = await startScene(asking, anthropicMessages, "stdio", "claude-approval");
    asking.model.clear();
    asking.model.queue(toolCall("bash", { command: `echo approved > ${scene.file}`, description: "write the file" }), text("Wrote it after approval."));
  });
  afterAll(async () => {
    await scene?.close();
    await asking?.stop();
  });

  it("Claude Code cancels the elicitation form at once; the call comes back BLOCKED with the oc_answer call and the audit says by client", async () => {
    await runSnippet(scene, "Claude Code over stdio");
    const [headless] = await runSnippet(scene, "Claude Code headless (`claude -p`)");
    expect(headless!.code, headless!.stderr).toBe(0);
    const delegated = scene.api.requests.findLast((r) => (r.conversation?.toolResults.length ?? 0) >= 2)!.conversation!.toolResults[1]!;
    expect(delegated).toContain('"status":"blocked"');
    expect(delegated).toContain("oc_answer");
    expect(delegated).toContain('"by":"client"');

    const audit = readFileSync(join(scene.values.stateDir, "audit.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, any>);
    const returned = audit.find((e) => e.decision === "returned");
    expect(returned, JSON.stringify(audit)).toMatchObject({ tool: "oc_delegate", by: "client", outcome: "returned", client: { name: expect.stringMatching(/claude/i) }, detail: { action: "cancel" } });
    expect(returned!.detail.elapsed_ms).toBeLessThan(FASTEST_HUMAN_MS);

    // opencode agrees: the request is still pending and nothing ran.
    const oc = connect({ url: asking.url, password: asking.password, directory: asking.directory });
    expect((await oc.call("permission.list")).map((p) => p.id)).toContain(returned!.detail.request_id);
    expect(existsSync(scene.file)).toBe(false);
  });
});
