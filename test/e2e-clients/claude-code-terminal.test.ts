// Claude Code 2.1.332 in its interactive terminal delegates to us as an MCP Task. Only there does it
// declare the Tasks extension: its binary asks `tengu_glowing_lark` (a remote feature flag; offline,
// its default) whose default is "the entrypoint is `cli` and the session is not remote", and sets
// the entrypoint to `cli` only when neither -p/--print nor --sdk-url is given and stdout is a
// terminal (else `sdk-cli`); CLAUDE_CODE_DISABLE_MCP_TASKS turns it off. So this test runs `claude
// "…"` under a pseudo-terminal (test/support/terminal.ts), as a person types it, with the snippets of
// docs/clients.md, and reads what passes through test/support/wiretap.mjs: the extension on every
// request, oc_delegate answered with a task, tasks/get polls, and the completed task's result, which
// Claude Code hands its model as a task notification, equal to the turn as opencode recorded it. An
// approval: the task turns input_required, Claude Code shows our form in the terminal, the person
// picks "once" and accepts, and tasks/update carries that answer to opencode, which runs the command.
// The fresh HOME holds what a person has after Claude Code's first start: onboarding done, this
// folder trusted, the API key approved (~/.claude.json); no variable a person would not set.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ClientCapabilities } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../src/client/connect.js";
import { declaresTasks } from "../../src/mcp/tasks/wire.js";
import { startApprovalScene, startScene, type Scene } from "../support/client-scene.js";
import { anthropicMessages } from "../support/llm-api/anthropic.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { clientBin, clientEnv, docSnippet, localize, negotiation, run, shellWords, tapped, type Localize } from "../support/real-clients.js";
import { turnOutcome, type MessageEvidence } from "../support/recorded-outcome.js";
import { startTerminal, type Terminal } from "../support/terminal.js";

const KEY = "sk-ant-scripted";

let oc: TestOpencode;
let claude: string;

beforeAll(async () => {
  [oc, claude] = await Promise.all([startOpencode(), clientBin("claude")]);
});
afterAll(async () => {
  await oc?.stop();
});

/** The snippet's `claude` lines under a docs/clients.md heading, made local, as argument lists. */
const snippetCommands = (heading: string, values: Localize) =>
  localize(docSnippet(heading), values)
    .split("\n")
    .filter((l) => l.startsWith("claude "))
    .map((l) => shellWords(l).slice(1));

/**
 * What ~/.claude.json holds once a person has been through Claude Code's first start: the
 * onboarding (theme chosen), the folder's trust dialog accepted, and "use this API key?" answered
 * yes (Claude Code keeps the key's last 20 characters).
 */
function onboarded(home: string, directory: string): void {
  const file = join(home, ".claude.json");
  const config = JSON.parse(readFileSync(file, "utf8")) as { projects?: Record<string, Record<string, unknown>> };
  const projects = { ...config.projects, [directory]: { ...config.projects?.[directory], hasTrustDialogAccepted: true } };
  const seen = { hasCompletedOnboarding: true, theme: "dark", customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] }, projects };
  writeFileSync(file, JSON.stringify({ ...config, ...seen }, null, 2), { mode: 0o600 });
}

type Rpc = {
  id?: string | number;
  method?: string;
  params?: { taskId?: string; name?: string; inputResponses?: Record<string, unknown>; _meta?: Record<string, unknown> };
  result?: Record<string, unknown>;
};
type Structured = { session_id: string; status: string; answer: string };

/**
 * Adds our server with the stdio snippet, then runs the terminal snippet in a pseudo-terminal,
 * `person` at its keyboard, until Claude Code's model is told the task completed. What passed.
 */
async function delegateInTerminal(scene: Scene, person: (terminal: Terminal) => Promise<void> = async () => {}) {
  const values = { ...scene.values, tap: join(scene.home, "mcp-traffic.jsonl") };
  // The harness's environment for the client, as a terminal gives it: TERM names the terminal,
  // and neither CI nor NO_COLOR is set in a person's shell.
  const { CI: _ci, NO_COLOR: _noColor, ...env } = clientEnv(scene.home, { ANTHROPIC_BASE_URL: scene.api.url, ANTHROPIC_API_KEY: KEY, TERM: "xterm-256color" });
  for (const args of snippetCommands("Claude Code over stdio", values).filter((a) => a[0] === "mcp" && a[1] === "add")) {
    const add = await run(claude, args, { env, cwd: scene.oc.directory, timeoutMs: 120_000 });
    expect(add.code, add.stderr).toBe(0);
  }
  onboarded(scene.home, scene.oc.directory);

  const [interactive] = snippetCommands("Claude Code in its terminal (`claude`)", values);
  expect(interactive).not.toContain("-p");
  const terminal = startTerminal(claude, interactive!, { env, cwd: scene.oc.directory });
  let notified;
  try {
    // The task's end reaches the model as a notification in a later request of the same conversation.
    const told = scene.api.request((r) => /<task-notification>[\s\S]*<status>completed<\/status>/.test(JSON.stringify(r.body.messages ?? [])), 240_000);
    [notified] = await Promise.all([told, person(terminal)]).catch((error: Error) => {
      throw new Error(`${error.message}\nthe terminal's screen ends:\n${terminal.screen().slice(-3000)}`);
    });
  } finally {
    await terminal.close();
  }

  const traffic = tapped(values.tap);
  const sent = traffic.flatMap((m) => (m.from === "client" ? [m.message as Rpc] : []));
  const answers = new Map(traffic.flatMap((m) => (m.from === "server" && m.message.id !== undefined ? [[m.message.id, m.message as Rpc] as const] : [])));
  const n = negotiation(sent);
  expect(n.methods[0]).toBe("server/discover");
  expect(n.methods).not.toContain("initialize");
  expect(n.versions).toEqual(["2026-07-28"]);
  // Every request carries its capabilities, and each declares the extension.
  const requests = sent.filter((m) => m.method !== undefined && m.id !== undefined);
  const capabilities = requests.map((m) => m.params?._meta?.["io.modelcontextprotocol/clientCapabilities"] as ClientCapabilities | undefined);
  expect(capabilities.map(declaresTasks), JSON.stringify(capabilities[0])).toEqual(requests.map(() => true));

  // oc_delegate was answered with a task at once, and Claude Code polled it to its end.
  const delegate = sent.find((m) => m.method === "tools/call" && m.params?.name === "oc_delegate")!;
  const handle = answers.get(delegate.id!)!.result!;
  expect(handle).toMatchObject({ resultType: "task", status: "working", taskId: expect.stringMatching(/^dlg_/) });
  const polls = sent.filter((m) => m.method === "tasks/get");
  expect(polls.map((p) => p.params?.taskId)).toEqual(polls.map(() => handle.taskId));
  const views = polls.map((p) => answers.get(p.id!)!.result!);
  const last = views.at(-1) as { status: string; result: { structuredContent: Structured } };
  expect(last.status).toBe("completed");

  // The completed task's result is the turn as opencode recorded it (re-read): session, status, answer.
  const data = last.result.structuredContent;
  const client = connect({ url: scene.oc.url, password: scene.oc.password, directory: scene.oc.directory });
  const [messages, busy] = await Promise.all([client.call("session.messages", { path: { sessionID: data.session_id } }), client.call("session.status")]);
  const recorded = messages as unknown as MessageEvidence[];
  const truth = turnOutcome(recorded, { idle: (busy as Record<string, unknown>)[data.session_id] === undefined });
  expect({ status: data.status, answer: data.answer }).toEqual({ status: truth.status, answer: truth.answer });

  // What Claude Code told its model: first that the call became a background task (the tool
  // result names our task id), then, in the notification, the task's result.
  const blocks = (notified.body.messages as Array<{ content: unknown }>).flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Array<{ text?: unknown; content?: unknown }>) : [],
  );
  expect(blocks.map((b) => JSON.stringify(b)).join("\n")).toContain(`started server-side task ${String(handle.taskId)}`);
  const notification = blocks.flatMap((b) => (typeof b.text === "string" && b.text.includes("<task-notification>") ? [b.text] : [])).at(-1)!;
  expect(notification).toContain("<status>completed</status>");
  // Claude Code escapes the result for its XML wrapper (`>` as `&gt;`): read back as text.
  const result = /<result>\n([\s\S]*?)\n<\/result>/.exec(notification)![1]!;
  const unescaped = result.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" })[e]!);
  expect(JSON.parse(unescaped)).toEqual(data);
  return { sent, answers, handle, views, truth, recorded };
}

describe("Claude Code in its terminal delegates as an MCP Task", () => {
  let scene: Scene;
  beforeAll(async () => {
    scene = await startScene(oc, anthropicMessages, "stdio", "claude-terminal");
  });
  afterAll(async () => {
    await scene?.close();
  });

  it("declares the Tasks extension, gets a task from oc_delegate, polls tasks/get, and its model gets the result opencode recorded", async () => {
    const { views, truth } = await delegateInTerminal(scene);
    expect(views.slice(0, -1).map((v) => v.status)).toEqual(views.slice(0, -1).map(() => "working"));
    expect(truth.status).toBe("done");
    expect(readFileSync(scene.file, "utf8")).toBe(scene.content);
  });
});

describe("Claude Code in its terminal answers an approval through the task", () => {
  let approval: Awaited<ReturnType<typeof startApprovalScene>>;
  beforeAll(async () => {
    approval = await startApprovalScene(anthropicMessages, "claude-terminal-approval");
  });
  afterAll(async () => {
    await approval?.close();
  });

  it("tasks/get says input_required with the permission form, the person picks once and accepts, tasks/update carries it, the command runs", async () => {
    const { scene } = approval;
    // The person at the keyboard: Claude Code shows our form; → opens the Decision choices, Enter
    // picks the first (once), ↓ goes to Accept, Enter sends it.
    const person = async (t: Terminal) => {
      const keys: Array<[string, RegExp]> = [
        ["", /requests\s*your\s*input/],
        ["\x1b[C", /Space\s*to\s*select/],
        ["\r", /✔\s*Decision:\s*once/],
        ["\x1b[B", /❯\s*Accept/],
      ];
      for (const [key, shown] of keys) {
        const since = t.mark();
        t.type(key);
        await t.waitFor(shown, key ? 30_000 : 180_000, since);
      }
      // Enter on Accept. An Enter typed the moment the button took focus was seen to go unanswered
      // (a person is slower), so Enter again, at most three times, until the task is over.
      for (let attempt = 1; ; attempt++) {
        const since = t.mark();
        t.type("\r");
        const over = t.waitFor(/MCP\s*task\s*dlg_\S+\s*\(opencode\/oc_delegate\)\s*completed/, 15_000, since);
        if (attempt === 3) return over;
        if (
          await over.then(
            () => true,
            () => false,
          )
        )
          return;
      }
    };
    const { sent, answers, views, truth, recorded } = await delegateInTerminal(scene, person);
    const asked = views.find((v) => v.status === "input_required") as {
      inputRequests: Record<string, { method: string; params: { requestedSchema: { properties: Record<string, unknown> } } }>;
    };
    const [key] = Object.keys(asked.inputRequests);
    expect(key).toMatch(/^per_/);
    expect(asked.inputRequests[key!]!.method).toBe("elicitation/create");
    expect(Object.keys(asked.inputRequests[key!]!.params.requestedSchema.properties)).toEqual(["decision", "message"]);
    const update = sent.find((m) => m.method === "tasks/update")!;
    expect(update.params!.inputResponses![key!]).toMatchObject({ action: "accept", content: { decision: "once" } });
    expect(answers.get(update.id!)!.result).toBeDefined();
    // opencode ran the command: its bash call completed and the file holds what it wrote.
    expect(truth.status).toBe("done");
    const bash = recorded.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.tool === "bash");
    expect(bash?.state?.status).toBe("completed");
    expect(readFileSync(scene.file, "utf8")).toBe("approved\n");
  });
});
