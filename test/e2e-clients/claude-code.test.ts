// Claude Code 2.1.332 (npm, pinned) drives our server the way docs/clients.md says: `claude mcp add`
// (stdio, and HTTP with a bearer token), `claude mcp list`, then `claude -p` in which its model calls
// oc_status and oc_delegate against a real opencode whose agent writes a file. Offline: Claude Code's
// model is the scripted Anthropic Messages API of test/support/llm-api.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_OAUTH } from "../../src/mcp/transports/http.js";
import { anthropicMessages } from "../support/llm-api/anthropic.js";
import { expectDelegated, expectReturnedApproval, startApprovalScene, startScene, type Scene } from "../support/client-scene.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { CLAUDE_MCP_WAIT, clientBin, clientEnv, docSnippet, localize, run, shellWords } from "../support/real-clients.js";

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
    ...CLAUDE_MCP_WAIT,
  });
}

/** Runs each line of a docs snippet that starts with `claude`, made local. */
async function runSnippet(scene: Scene, heading: string) {
  const results = [];
  for (const line of localize(docSnippet(heading), scene.values)
    .split("\n")
    .filter((l) => l.startsWith("claude "))) {
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

describe("Claude Code over http, without the header", () => {
  let scene: Scene;
  beforeAll(async () => {
    scene = await startScene(oc, anthropicMessages, "http", "claude-no-header");
  });
  afterAll(async () => {
    await scene?.close();
  });

  it("without the Authorization header, claude mcp list says to send it (not an OAuth login)", async () => {
    const e = env(scene);
    const add = await run(claude, ["mcp", "add", "-s", "user", "--transport", "http", "no-header", scene.http!.url], { env: e, cwd: scene.oc.directory });
    expect(add.code, add.stderr).toBe(0);
    const list = await run(claude, ["mcp", "list"], { env: e, cwd: scene.oc.directory, timeoutMs: 120_000 });
    expect(list.stdout).toMatch(/no-header: .*Failed to connect/);
    expect(list.stdout).toContain(NO_OAUTH.replaceAll('"', '\\"'));
  });
});

describe("claude -p and an approval (nobody there to answer it)", () => {
  let approval: Awaited<ReturnType<typeof startApprovalScene>>;
  let scene: Scene;
  beforeAll(async () => {
    approval = await startApprovalScene(anthropicMessages, "claude-code-approval");
    scene = approval.scene;
  });
  afterAll(async () => {
    await approval?.close();
  });

  it("Claude Code cancels the elicitation form at once; the call comes back BLOCKED with the oc_answer call and the audit says by client", async () => {
    await runSnippet(scene, "Claude Code over stdio");
    const [headless] = await runSnippet(scene, "Claude Code headless (`claude -p`)");
    await expectReturnedApproval(scene, headless!, "cancel");
    // Claude Code shows its model the structured result: the refusal is reported there too.
    const delegated = scene.api.requests.findLast((r) => (r.conversation?.toolResults.length ?? 0) >= 2)!.conversation!.toolResults[1]!;
    expect(delegated).toContain('"by":"client"');
  });
});
