// Workflows from the library, against the real opencode with the scripted model: the "fix a bug"
// loop (an agent step, a check, a review that asks for a change then approves, a sign-off), a check
// that sends the run back once then fails it truthfully, and a malformed workflow refused before
// anything runs. Every step's recorded outcome is compared with the session re-read from opencode.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/index.js";
import { Conductor } from "../../../src/core/conductor.js";
import { readAudit } from "../../../src/core/governance/audit.js";
import { useConductor } from "../../support/conductor.js";
import { text, toolCall } from "../../support/scripted-model.js";
import { readMessages } from "../../support/turns.js";

const h = useConductor({ gitInit: true });
let stateDir: string;
let c: Conductor;
beforeAll(() => {
  stateDir = mkdtempSync(join(tmpdir(), "occ-workflows-e2e-"));
  c = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory, stateDir, queue: false });
});
afterAll(() => {
  c?.close();
  rmSync(stateDir, { recursive: true, force: true });
});
afterEach(() => {
  expect(h.oc.model.leftovers(), "model steps this test queued but nothing used").toEqual({});
});

const opencode = () => connect({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory });
const chats = () => h.oc.model.requests.filter((r) => r.kind === "chat").length;
const approve = '```json\n{"verdict": "approve", "comments": []}\n```';
const changes = '```json\n{"verdict": "request_changes", "comments": ["fix.txt: say v2"]}\n```';

/** Each turn of a session as opencode recorded it: the last assistant text before the next user message, completed or not. */
async function recordedTurns(sessionId: string): Promise<Array<{ answer: string; completed: boolean }>> {
  const turns: Array<{ answer: string; completed: boolean }> = [];
  for (const m of await readMessages(opencode(), sessionId)) {
    if (m.info.role === "user") turns.push({ answer: "", completed: false });
    else if (turns.length) {
      const text = m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
      turns[turns.length - 1] = {
        answer: text || turns[turns.length - 1]!.answer,
        completed: "completed" in m.info.time && m.info.time.completed !== undefined,
      };
    }
  }
  return turns;
}

/** The attempts' recorded turns (in order, one session or several) against the sessions opencode holds. */
async function expectRecorded(attempts: Array<{ turns?: Array<{ sessionId?: string; status: string; answer?: string }> }>): Promise<void> {
  const bySession = new Map<string, Array<{ status: string; answer?: string }>>();
  for (const a of attempts) for (const t of a.turns ?? []) bySession.set(t.sessionId!, [...(bySession.get(t.sessionId!) ?? []), t]);
  for (const [sessionId, ours] of bySession) {
    const theirs = await recordedTurns(sessionId);
    expect(ours.map((t) => [t.status, t.answer])).toEqual(theirs.map((t) => [t.completed ? "done" : "not completed", t.answer]));
  }
}

const FIX = (file: string) => `name: fix a bug
inputs:
  bug: {}
steps:
  - name: implement
    kind: agent
    prompt: "Fix: {{inputs.bug}}"
    isolation: shared
  - name: tests
    kind: check
    run: grep -q v2 ${file}
    on_fail: implement
    max_retries: 1
  - name: review
    kind: review
    of: implement
    model: fake/backup
  - name: sign-off
    kind: approval
    message: "Ship {{steps.implement.output}}?"
`;

describe("workflows from the library (e2e)", () => {
  it("fix a bug: review requests a change, then approves; the sign-off stops the run until answered", async () => {
    const file = join(h.oc.directory, "fix.txt");
    h.oc.model
      .for("scripted")
      .queue(
        toolCall("write", { filePath: file, content: "v2 first\n" }),
        text("Wrote v2."),
        toolCall("write", { filePath: file, content: "v2 again\n" }),
        text("Said v2."),
      );
    h.oc.model.for("backup").queue(text(`Not yet.\n${changes}`), text(`Good.\n${approve}`));
    const blocked = await c.workflow({ text: FIX("fix.txt"), inputs: { bug: "fix.txt must say v2" }, timeoutMs: 120_000 });
    expect(blocked.status, JSON.stringify(blocked.steps, null, 1)).toBe("blocked");
    const [implement, tests, review, signOff] = blocked.steps;
    expect(implement!.attempts.map((a) => a.status)).toEqual(["done", "done"]);
    expect(implement!.attempts[1]!.feedback).toContain("fix.txt: say v2");
    // The second attempt continued the first one's session.
    expect(implement!.attempts[1]!.turns![0]!.sessionId).toBe(implement!.attempts[0]!.turns![0]!.sessionId);
    expect(tests!.attempts.map((a) => a.status)).toEqual(["done", "done"]);
    expect(review!.attempts.map((a) => a.verdict?.verdict)).toEqual(["request_changes", "approve"]);
    expect(review!.attempts[0]!.verdict!.comments).toEqual(["fix.txt: say v2"]);
    await expectRecorded(implement!.attempts);
    await expectRecorded(review!.attempts);
    expect(signOff!.status).toBe("blocked");
    expect(signOff!.attempts[0]!.asked).toBe("Ship Said v2.?");
    expect(readFileSync(file, "utf8")).toBe("v2 again\n");

    // Nothing moves while it waits; then a person approves.
    expect((await c.workflows.resume(blocked.id)).status).toBe("blocked");
    await c.workflows.answer(blocked.id, { approve: true, by: "e2e" });
    const done = await c.workflows.wait(blocked.id, { timeoutMs: 60_000 });
    expect(done.status).toBe("done");
    expect(done.steps[3]!.attempts[0]!.signOff).toMatchObject({ decision: "approve", by: "e2e" });
    const trail = await readAudit(join(stateDir, "audit.jsonl"), { tool: "workflow", limit: 100 });
    const mine = trail.filter((e) => e.detail?.run === blocked.id);
    expect(mine.map((e) => e.outcome)).toContain("answered");
    expect(mine.at(-1)!.outcome).toBe("done");
    expect(mine.filter((e) => e.outcome === "done" && e.detail?.step === "implement").map((e) => e.session_id)).toEqual([
      implement!.attempts[0]!.turns![0]!.sessionId,
      implement!.attempts[0]!.turns![0]!.sessionId,
    ]);
  });

  it("a failing check sends the run back once, then fails it truthfully", async () => {
    const file = join(h.oc.directory, "never.txt");
    h.oc.model
      .for("scripted")
      .queue(
        toolCall("write", { filePath: file, content: "v1\n" }),
        text("Wrote v1."),
        toolCall("write", { filePath: file, content: "v1 still\n" }),
        text("Still v1."),
      );
    const before = chats();
    const run = await c.workflow({ text: FIX("never.txt"), inputs: { bug: "never.txt must say v2" }, timeoutMs: 120_000 });
    expect(run.status).toBe("failed");
    expect(chats() - before).toBe(4);
    const [implement, tests, review] = run.steps;
    expect(implement!.attempts.map((a) => a.status)).toEqual(["done", "done"]);
    expect(implement!.attempts[1]!.feedback).toContain("grep -q v2 never.txt");
    expect(tests!.attempts.map((a) => [a.status, a.checks?.[0]?.exit])).toEqual([
      ["failed", 1],
      ["failed", 1],
    ]);
    expect(tests!.attempts[1]!.reason).toBe("the checks failed, after sending the run back 1 time");
    expect(run.end).toMatchObject({ status: "failed", reason: 'step "tests" failed: the checks failed, after sending the run back 1 time' });
    expect(review!.attempts).toEqual([]);
    await expectRecorded(implement!.attempts);
    // Retried: the check's step runs again (the file still fails it), nothing is prompted.
    const again = await c.workflows.retry(run.id);
    expect(again.status).toBe("running");
    const ended = await c.workflows.wait(run.id, { timeoutMs: 60_000 });
    expect(ended.status).toBe("failed");
    expect(ended.steps[1]!.attempts).toHaveLength(3);
    expect(chats() - before).toBe(4);
  });

  it("a malformed workflow is refused before anything runs, naming the field and its line", async () => {
    const before = chats();
    const runs = (await c.workflows.runs()).length;
    await expect(c.workflow({ text: FIX("x").replace("kind: approval", "kind: signoff") })).rejects.toThrow(
      'inline:19: steps[3].kind: unknown step kind "signoff": use one of agent, check, review, approval, deliver',
    );
    await expect(c.workflow({ text: FIX("x") })).rejects.toThrow('needs the input "bug"');
    await expect(c.workflow({ text: FIX("x").replace("on_fail: implement", "on_fail: review"), inputs: { bug: "b" } })).rejects.toThrow(
      /inline:12: steps\[1\]\.on_fail: names "review", which comes later: a cycle/,
    );
    expect((await c.workflows.runs()).length).toBe(runs);
    expect(chats()).toBe(before);
  });
});
