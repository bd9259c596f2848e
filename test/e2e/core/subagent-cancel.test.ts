// Stopping a delegation while its sub-agent runs, on opencode 1.x: the delegation's cancel
// (conductor.delegations.cancel, which the MCP Tasks cancel uses) and the interrupt (conductor.interrupt,
// oc_interrupt, oc_delegate's interrupt_on_cancel) both abort the delegated session. Compared with
// opencode's record, re-read from the server: both sessions' messages and status, the open
// permission requests, the scripted model's requests.
// - The sub-agent's model call hangs: opencode aborts the child with the parent (both replies
//   `MessageAbortedError`, both idle, the child's model request closed); nothing runs on, and the
//   delegation is `cancelled` with the parent's interrupted turn, live and from a fresh conductor.
// - The sub-agent waits on a permission: the child's reply is aborted too, but 1.x keeps listing
//   its permission, and approving it would still run the command. The conductor now rejects what
//   the abort left listed, so nothing is pending and the command never runs (before, `pending`
//   still offered it). The parent's `task` call fails `Task cancelled`, and 1.x may take one more
//   step before the abort lands: the outcome reported is whichever the parent's record holds.
// Facts: docs/opencode-behaviour.md §5 and §6.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../../src/core/conductor.js";
import type { PlacedResult } from "../../../src/core/placement/result.js";
import { useConductor } from "../../support/conductor.js";
import { hang, toolCall } from "../../support/scripted-model.js";

const h = useConductor({ permission: { bash: "ask" } });
let stateDir: string;
const conductors: Conductor[] = [];
beforeAll(() => void (stateDir = mkdtempSync(join(tmpdir(), "occ-subagent-cancel-"))));
afterAll(() => {
  for (const c of conductors) c.close();
  rmSync(stateDir, { recursive: true, force: true });
});

/** A conductor keeping its delegations in the test's state dir; a fresh one reads them as another process would. */
function library(): Conductor {
  const c = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory, stateDir, queue: false });
  conductors.push(c);
  return c;
}

const taskCall = (description: string) => toolCall("task", { description, prompt: `${description}, then say so`, subagent_type: "general" });
const chats = () => h.oc.model.requests.filter((r) => r.kind === "chat").length;

/** opencode's record: both sessions' messages and status, and the open permission requests. */
async function recorded(sessionID: string) {
  const c = h.conductor.client;
  const children = await c.call("session.children", { path: { sessionID } });
  expect(children).toHaveLength(1);
  const child = children[0]!;
  const [messages, childMessages, status, permissions] = await Promise.all([
    c.call("session.messages", { path: { sessionID } }),
    c.call("session.messages", { path: { sessionID: child.id } }),
    c.call("session.status"),
    c.call("permission.list"),
  ]);
  const last = messages.at(-1)!;
  return {
    child,
    last,
    lastText: last.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(""),
    prompt: messages.findLast((m) => m.info.role === "user")!.info.id,
    childLast: childMessages.at(-1)!,
    tools: messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" ? [p] : []))),
    childTools: childMessages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" ? [p] : []))),
    running: Object.keys(status),
    permissions,
  };
}
type Recorded = Awaited<ReturnType<typeof recorded>>;
const errorName = (m: Recorded["last"]) => (m.info.role === "assistant" ? m.info.error?.name : undefined);

/** The parent's turn as opencode recorded it: aborted (an error on its last reply) or ended by its own last reply. */
function expectedTurn(rec: Recorded) {
  const name = errorName(rec.last);
  return name
    ? { status: "interrupted", error: expect.objectContaining({ name }), messageId: rec.prompt }
    : { status: "done", answer: rec.lastText, messageId: rec.prompt };
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++)
    if (await check()) return void 0;
    else await new Promise((r) => setTimeout(r, 100));
  throw new Error(`timed out waiting for ${what}`);
}

describe("stopping a delegation while its sub-agent runs, on opencode 1.x (e2e)", () => {
  it("the sub-agent's model call hangs: cancel aborts both sessions as opencode records it, nothing runs on, and the delegation reads cancelled, live and from a fresh conductor", async () => {
    h.oc.model.queue(taskCall("hang here"), hang({ text: "child partial " }));
    const before = chats();
    const c = library();
    const handle = await c.delegations.delegate({ task: "use a sub-agent that hangs" });
    const [, childCall] = await h.oc.model.waitForRequests(before + 2, { kind: "chat", timeoutMs: 60_000 }).then((r) => r.slice(-2));
    const stopped = await c.delegations.cancel(handle.id);

    const parent = handle.sessions[0]!;
    const rec = await recorded(parent);
    // opencode aborted the child with the parent: its model request closed, its reply aborted, both idle.
    await h.oc.model.waitForEnd(childCall!, { timeoutMs: 10_000 });
    expect(childCall!.sessionId).toBe(rec.child.id);
    expect(errorName(rec.childLast)).toBe("MessageAbortedError");
    expect(errorName(rec.last)).toBe("MessageAbortedError");
    expect(rec.tools.map((p) => [p.tool, p.state.status])).toEqual([["task", "error"]]);
    expect(rec.running).toEqual([]);
    // Nothing asks the model again once stopped.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(chats()).toBe(before + 2);
    expect((await recorded(parent)).running).toEqual([]);

    const turn = expectedTurn(rec);
    expect(turn.status).toBe("interrupted");
    expect(stopped).toMatchObject({ status: "cancelled", turn: "interrupted", result: turn });
    const fresh = library();
    expect(await fresh.result(parent)).toMatchObject({ state: "idle", last: turn });
    expect(await fresh.delegations.get(handle.id)).toMatchObject({ status: "cancelled", turn: "interrupted", result: turn });
  });

  it("the sub-agent waits on a permission: cancel leaves no request listed and the command never runs; the delegation reads the parent's turn as recorded", async () => {
    h.oc.model.queue(taskCall("write a marker"), toolCall("bash", { command: "echo child > cancelled.txt", description: "marker" }));
    const c = library();
    const handle = await c.delegations.delegate({ task: "have a sub-agent write a marker" });
    const parent = handle.sessions[0]!;
    await waitFor(async () => (await c.delegations.get(handle.id)).status === "input_required", "the sub-agent's permission");
    const [asked] = await h.conductor.client.call("permission.list");
    expect((await c.delegations.get(handle.id)).pending).toEqual([expect.objectContaining({ id: asked!.id, sessionId: asked!.sessionID, permission: "bash" })]);

    const stopped = await c.delegations.cancel(handle.id);
    const rec = await recorded(parent);
    expect(asked!.sessionID).toBe(rec.child.id);
    // The child's turn was aborted with its tool; the parent's task call failed; nothing runs, nothing is asked.
    expect(errorName(rec.childLast)).toBe("MessageAbortedError");
    expect(rec.childTools.map((p) => [p.tool, p.state.status])).toEqual([["bash", "error"]]);
    expect(rec.tools[0]).toMatchObject({ tool: "task", state: { status: "error", error: "Task cancelled" } });
    expect(rec.running).toEqual([]);
    expect(rec.permissions).toEqual([]);
    expect(await c.pending({ sessionId: parent })).toEqual([]);

    const turn = expectedTurn(rec);
    expect(stopped).toMatchObject({ status: turn.status === "interrupted" ? "cancelled" : "completed", result: turn });
    expect((stopped.result as PlacedResult).pending).toBeUndefined();
    const fresh = library();
    expect(await fresh.result(parent)).toMatchObject({ state: "idle", last: turn });
    expect((await fresh.result(parent)).last.pending).toBeUndefined();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(existsSync(join(h.oc.directory, "cancelled.txt"))).toBe(false);
  });

  it("the same through an interrupt of the delegated session (oc_interrupt): no request left, the command never runs, the turn as recorded", async () => {
    h.oc.model.queue(taskCall("write another"), toolCall("bash", { command: "echo child > interrupted.txt", description: "marker" }));
    const r = await h.conductor.delegate({ task: "have a sub-agent write another marker", timeoutMs: 60_000 });
    const [child] = await h.conductor.client.call("session.children", { path: { sessionID: r.sessionId } });
    const asked = (await h.conductor.client.call("permission.list")).find((p) => p.sessionID === child!.id);
    expect(r).toMatchObject({ status: "blocked", pending: [expect.objectContaining({ id: asked!.id })] });

    const stopped = await h.conductor.interrupt(r.sessionId);
    const rec = await recorded(r.sessionId);
    expect(asked!.sessionID).toBe(rec.child.id);
    expect(errorName(rec.childLast)).toBe("MessageAbortedError");
    expect(rec.running).toEqual([]);
    expect(rec.permissions).toEqual([]);
    expect(stopped).toMatchObject({ wasRunning: true, ...expectedTurn(rec) });
    expect(stopped.pending).toBeUndefined();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(existsSync(join(h.oc.directory, "interrupted.txt"))).toBe(false);
  });
});
