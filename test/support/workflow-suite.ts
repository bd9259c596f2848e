// The oc_workflow suite both majors run (test/e2e/mcp/workflows.test.ts on 1.x,
// test/e2e-v2/workflows.test.ts on 2.x): workflows through the built MCP server over stdio against
// a real opencode and the scripted model.
// - "fix a bug" (examples/workflows/fix-a-bug.yaml, its reviewer model swapped for the scripted
//   one): the fix made in a worktree, the check run there, a review that requests a change and a
//   second that approves, the sign-off answered through MCP, the branch merged: the target ends at
//   the last agent step's branch head.
// - The MCP server SIGKILLed during an agent step and during the sign-off wait: a fresh server on
//   the same state dir resumes both runs (the running agent step re-attached: the model is asked
//   once per step, counted; the sign-off still pending, never answered by itself).
// Every agent and review step's recorded outcome is compared with the session as opencode
// recorded it, re-read from the server.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { commitFiles, gitAt, type Git } from "./git-repo.js";
import { startMcp, type McpSession } from "./mcp-client.js";
import { makeProjectDir, offlineConfig, xdg, type TestOpencode } from "./opencode.js";
import { text, type toolCall } from "./scripted-model.js";

/** The last assistant message of a session as opencode recorded it. */
export interface RecordedEnd {
  /** The message completed (1.x `time.completed`, 2.x `finish: "stop"`). */
  completed: boolean;
  /** Its text. */
  answer: string;
}

export interface WorkflowMajor {
  /** The harness server (1.x or 2.x), a git project with one commit. */
  start(): Promise<TestOpencode>;
  /** Environment a user of this major gives the MCP server beyond the URL (2.x: OPENCODE_BIN, for the worktrees' private servers). */
  env(): Promise<Record<string, string>>;
  /** The agent's shell tool call in this major's words. */
  shell(command: string): ReturnType<typeof toolCall>;
  /** The session's last assistant message, read from the harness server. */
  recorded(server: TestOpencode, sessionId: string): Promise<RecordedEnd>;
}

type Turn = { session_id: string; status: string; answer: string; worktree?: { branch?: string; base?: string; head?: string } };
type Attempt = {
  turns?: Turn[];
  verdict?: { verdict: string; comments: string[] };
  sign_off?: Record<string, unknown>;
  delivered?: Record<string, unknown>;
} & Record<string, unknown>;
type Run = { id: string; status: string; steps: Array<{ name: string; kind: string; status: string; attempts: Attempt[] }> };
const runOf = (data: Record<string, unknown>) => data.run as Run;

const approve = '```json\n{"verdict": "approve", "comments": []}\n```';
const changes = '```json\n{"verdict": "request_changes", "comments": ["fix.txt: say v2 twice"]}\n```';

/** Fix, test, sign off: the short workflow the crash tests and the console's browser test walk. */
export const SIGN_OFF_WORKFLOW = `name: fix a bug
inputs:
  bug: {}
steps:
  - name: implement
    kind: agent
    prompt: "Fix: {{inputs.bug}}"
    isolation: shared
  - name: tests
    kind: check
    run: "true"
    on_fail: implement
  - name: sign-off
    kind: approval
    message: "Ship it? {{steps.implement.output}}"
`;

export function workflowSuite(major: WorkflowMajor): void {
  let server: TestOpencode;
  let stateDir: string;
  let env: Record<string, string>;
  const open: McpSession[] = [];

  async function mcp(): Promise<McpSession> {
    const m = await startMcp(env);
    open.push(m);
    return m;
  }

  /** SIGKILL: no shutdown of any kind, as a crash. */
  async function kill(m: McpSession): Promise<void> {
    const pid = m.transport.pid!;
    const gone = new Promise<void>((resolve) => (m.transport.onclose = () => resolve()));
    process.kill(pid, "SIGKILL");
    await gone;
    open.splice(open.indexOf(m), 1);
  }

  beforeAll(async () => {
    server = await major.start();
    stateDir = join(server.root, "state");
    env = {
      OPENCODE_URL: server.url,
      OPENCODE_PASSWORD: server.password,
      OPENCODE_CONDUCTOR_DIRECTORY: server.directory,
      OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
      OPENCODE_CONDUCTOR_TOOLSETS: "workflows",
      // What the worktrees' private servers inherit: the harness's home and the scripted provider, offline.
      ...xdg(server.home),
      OPENCODE_CONFIG_CONTENT: JSON.stringify(offlineConfig(server.model.baseURL)),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      npm_config_registry: "http://127.0.0.1:9/",
      ...(await major.env()),
    };
  }, 120_000);
  // A test that failed must not leave its script to the next one.
  beforeEach(() => server.model.clear());
  afterAll(async () => {
    await Promise.all(open.map((m) => m.close()));
    await server?.stop();
  });

  const chats = (model: string) => server.model.requests.filter((r) => r.kind === "chat" && r.body.model === model).length;

  /** Every turn of the run's agent and review steps against the session opencode holds: done, completed, the same answer. */
  async function expectRecorded(run: Run): Promise<void> {
    let turns = 0;
    for (const step of run.steps.filter((s) => s.kind === "agent" || s.kind === "review")) {
      for (const attempt of step.attempts) {
        for (const turn of attempt.turns ?? []) {
          const recorded = await major.recorded(server, turn.session_id);
          expect(recorded.completed, `${step.name}: ${turn.session_id}`).toBe(true);
          expect(turn.status).toBe("done");
          expect(turn.answer, JSON.stringify(attempt)).toBe(recorded.answer);
          turns++;
        }
      }
    }
    expect(turns).toBeGreaterThan(0);
  }

  describe("examples/workflows/fix-a-bug.yaml through oc_workflow", () => {
    let repo: string;
    let git: Git;

    beforeAll(async () => {
      repo = await makeProjectDir(server, "repo", { gitInit: true });
      git = gitAt(repo, server.home);
      await commitFiles(repo, git, { "fix.txt": "v1\n" });
    });

    it("implements in a worktree, a review requests a change, the second approves, signed off through MCP, merged: the target is the last agent step's branch", async () => {
      const example = readFileSync(new URL("../../examples/workflows/fix-a-bug.yaml", import.meta.url), "utf8");
      const target = (await git("branch", "--show-current")).trim();
      const write = (content: string) => major.shell(`printf '${content}\\n' > fix.txt`);
      server.model.for("scripted").queue(write("v2"), text("Fixed."), write("v2 v2"), text("Fixed twice."));
      // The first reviewer tries to write: its server holds it read-only, so the command is refused.
      server.model.for("backup").queue(major.shell("printf 'reviewer was here\\n' > fix.txt"), text(`Almost.\n${changes}`), text(`Good.\n${approve}`));
      const m = await mcp();
      const started = await m.call("oc_workflow", {
        action: "start",
        text: example.replace("anthropic/claude-sonnet-4-5", "fake/backup"),
        inputs: { bug: "fix.txt says v1", target, test: "grep -q v2 fix.txt" },
        directory: repo,
        timeout_s: 600,
      });
      expect(started.isError, started.text).toBe(false);
      const blocked = runOf(started.data);
      expect(blocked.status, started.text).toBe("blocked");
      expect(started.text).toContain(`BLOCKED: a person must sign off: Merge the fix for fix.txt says v1 into ${target}?`);
      expect(blocked.steps.map((s) => [s.name, s.status, s.attempts.length])).toEqual([
        ["implement", "done", 2],
        ["tests", "done", 2],
        ["review", "done", 2],
        ["sign-off", "blocked", 1],
        ["merge", "pending", 0],
      ]);
      const [first, last] = blocked.steps[0]!.attempts.map((a) => a.turns![0]!.worktree!);
      expect(first!.branch).toMatch(/^conductor\//);
      // The second round started from the first one's branch, and each branch holds its round's fix.
      expect(last!.base).toBe(first!.head);
      expect(await git("show", `${first!.head}:fix.txt`)).toBe("v2\n");
      expect(await git("show", `${last!.head}:fix.txt`)).toBe("v2 v2\n");
      expect(blocked.steps[2]!.attempts.map((a) => a.verdict)).toEqual([
        { verdict: "request_changes", comments: ["fix.txt: say v2 twice"] },
        { verdict: "approve", comments: [] },
      ]);
      // Each reviewer read its round's branch in a worktree of its own, and changed nothing there.
      expect(blocked.steps[2]!.attempts[0]!.turns![0]!.status).toBe("done");
      expect(blocked.steps[2]!.attempts.map((a) => a.turns![0]!.worktree)).toEqual([
        expect.objectContaining({ base: first!.head, head: first!.head }),
        expect.objectContaining({ base: last!.head, head: last!.head }),
      ]);
      // Nothing reached the user's checkout before the sign-off.
      expect(readFileSync(join(repo, "fix.txt"), "utf8")).toBe("v1\n");
      await expectRecorded(blocked);

      const answered = await m.call("oc_workflow", { action: "answer", run: blocked.id, approve: true, comment: "merge it", timeout_s: 120 });
      expect(answered.isError, answered.text).toBe(false);
      const done = runOf(answered.data);
      expect(done.status, answered.text).toBe("done");
      expect(done.steps[3]!.attempts[0]!.sign_off).toMatchObject({ decision: "approve", by: "model", comment: "merge it" });
      expect((await git("rev-parse", target)).trim()).toBe(last!.head);
      expect(done.steps[4]!.attempts[0]!.delivered).toMatchObject({ into: target, after: last!.head });
      expect(readFileSync(join(repo, "fix.txt"), "utf8")).toBe("v2 v2\n");
      await expectRecorded(done);
    }, 600_000); // four private servers start one after the other (two fixes, two reviews) on a shared 2-core machine
  });

  describe("the MCP server SIGKILLed", () => {
    it("during an agent step: a fresh server resumes the run, re-attached to the session (the model asked once), then the sign-off is answered through MCP", async () => {
      server.model.for("scripted").queue(text("Fixed it.", { delayMs: 4_000 }));
      const scripted = chats("scripted");
      const first = await mcp();
      const started = await first.call("oc_workflow", { action: "start", text: SIGN_OFF_WORKFLOW, inputs: { bug: "the crash" }, timeout_s: 0 });
      expect(started.isError, started.text).toBe(false);
      const id = runOf(started.data).id;
      // A cold opencode on a loaded machine can take half a minute before its first model request.
      await server.model.waitForRequests(scripted + 1, { model: "scripted", kind: "chat", timeoutMs: 180_000 });
      await kill(first);

      const fresh = await mcp();
      const listed = await fresh.call("oc_workflow", { action: "list" });
      expect(listed.data.runs).toEqual(expect.arrayContaining([expect.objectContaining({ id, status: "running", step: "implement" })]));
      const resumed = await fresh.call("oc_workflow", { action: "resume", run: id, timeout_s: 120 });
      expect(resumed.isError, resumed.text).toBe(false);
      const blocked = runOf(resumed.data);
      expect(blocked.status, resumed.text).toBe("blocked");
      expect(resumed.text).toContain("BLOCKED: a person must sign off: Ship it? Fixed it.");
      // Re-attached, not prompted again: one request for the agent step.
      expect(chats("scripted") - scripted).toBe(1);
      expect(blocked.steps.map((s) => [s.name, s.status, s.attempts.length])).toEqual([
        ["implement", "done", 1],
        ["tests", "done", 1],
        ["sign-off", "blocked", 1],
      ]);
      await expectRecorded(blocked);

      const answered = await fresh.call("oc_workflow", { action: "answer", run: id, approve: true, comment: "ship it", timeout_s: 60 });
      expect(answered.isError, answered.text).toBe(false);
      const done = runOf(answered.data);
      expect(done.status).toBe("done");
      expect(done.steps[2]!.attempts[0]!.sign_off).toMatchObject({ decision: "approve", by: "model", comment: "ship it" });
    });

    it("during the sign-off wait: a fresh server finds it still pending (resume does not sign off), and an answer through MCP ends it", async () => {
      server.model.for("scripted").queue(text("Fixed again."));
      const scripted = chats("scripted");
      const first = await mcp();
      const started = await first.call("oc_workflow", { action: "start", text: SIGN_OFF_WORKFLOW, inputs: { bug: "the hang" }, timeout_s: 120 });
      const id = runOf(started.data).id;
      expect(runOf(started.data).status, started.text).toBe("blocked");
      await kill(first);

      const fresh = await mcp();
      const status = await fresh.call("oc_workflow", { action: "status", run: id });
      expect(runOf(status.data).status).toBe("blocked");
      expect(runOf(status.data).steps[2]!.attempts[0]!.asked).toBe("Ship it? Fixed again.");
      const resumed = await fresh.call("oc_workflow", { action: "resume", run: id, timeout_s: 5 });
      expect(runOf(resumed.data).status).toBe("blocked");
      expect(resumed.text).toContain("Nothing signs off by itself.");
      const rejected = await fresh.call("oc_workflow", { action: "answer", run: id, approve: false, comment: "not today", timeout_s: 30 });
      const ended = runOf(rejected.data);
      expect(ended.status).toBe("failed");
      expect(rejected.text).toContain('step "sign-off" failed: rejected by model: not today');
      expect(chats("scripted") - scripted).toBe(1);
      await expectRecorded(ended);
    });
  });
}
