// Blocked turns against the real opencode: a bash call that asks (server config `bash: ask`) and a
// question, answered through the conductor, then picked up with wait(). Also a request from a
// session in another project directory, which opencode keeps in that directory's instance.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dumpMessages, useConductor } from "../../support/conductor.js";
import { makeProjectDir } from "../../support/opencode.js";
import { text, toolCall } from "../../support/scripted-model.js";
import { COLOR_QUESTION } from "../../support/questions.js";

const h = useConductor({ permission: { bash: "ask" } });

const lastToolResult = (sessionId: string) => {
  const messages = h.oc.model.requestsFor(sessionId).at(-1)?.body.messages ?? [];
  return String(messages.filter((m) => m.role === "tool").at(-1)?.content ?? "");
};

describe("approvals (e2e)", () => {
  it("agent preset: an ask blocks the turn; answer once, then wait completes it", async () => {
    h.oc.model.queue(toolCall("bash", { command: "echo approved > approved.txt", description: "write a marker" }), text("Marker written."));
    const r = await h.conductor.delegate({ task: "write the marker", permissions: "agent" });
    expect(r.status).toBe("blocked");
    expect(r.pending).toEqual([
      expect.objectContaining({
        kind: "permission",
        sessionId: r.sessionId,
        permission: "bash",
        patterns: ["echo approved > approved.txt"],
        always: ["echo *"],
      }),
    ]);
    const requestId = r.pending![0]!.id;
    expect((await h.conductor.pending({ sessionId: r.sessionId })).map((p) => p.id)).toEqual([requestId]);
    expect((await h.conductor.pending()).map((p) => p.id)).toContain(requestId);
    expect((await h.conductor.result(r.sessionId)).last).toMatchObject({ status: "blocked", pending: [expect.objectContaining({ id: requestId })] });

    await h.conductor.answer({ requestId, decision: "once" });
    const done = await h.conductor.wait(r.sessionId, { timeoutMs: 90_000 });
    expect(done).toMatchObject({ status: "done", answer: "Marker written.", tools: [expect.objectContaining({ tool: "bash", status: "completed" })] });
    expect(done.pending).toBeUndefined();
    expect(readFileSync(join(h.oc.directory, "approved.txt"), "utf8")).toBe("approved\n");
    expect(await h.conductor.pending({ sessionId: r.sessionId })).toEqual([]);
    await expect(h.conductor.answer({ requestId, decision: "once" })).rejects.toThrow(/not found/);
    await expect(h.conductor.answer({ requestId: "per_unknown", decision: "once" })).rejects.toThrow(/pass its sessionId/);
  });

  it("a question blocks the turn; the answer reaches the model", async () => {
    const questions = [COLOR_QUESTION];
    h.oc.model.queue(toolCall("question", { questions }), text("Blue it is."));
    const r = await h.conductor.delegate({ task: "pick a color" });
    expect(r).toMatchObject({
      status: "blocked",
      pending: [{ kind: "question", sessionId: r.sessionId, questions: [expect.objectContaining({ question: "Which color?" })] }],
    });
    const questionId = r.pending![0]!.id;
    expect(questionId).toMatch(/^que_/);
    await dumpMessages(h, "question-blocked", r.sessionId);

    await h.conductor.answer({ questionId, answers: [["Blue"]] });
    const done = await h.conductor.wait(r.sessionId, { timeoutMs: 90_000 });
    expect(done).toMatchObject({ status: "done", answer: "Blue it is." });
    expect(lastToolResult(r.sessionId)).toContain('"Which color?"="Blue"');
  });

  it("answers a request of a session in another directory (its own instance)", async () => {
    const other = await makeProjectDir(h.oc, "other");
    h.oc.model.queue(toolCall("bash", { command: "echo elsewhere > where.txt", description: "marker" }), text("Done elsewhere."));
    const r = await h.conductor.delegate({ task: "write where.txt", directory: other });
    expect(r.status).toBe("blocked");
    // The default directory's instance does not know it; the conductor finds the right one.
    expect(await h.conductor.client.call("permission.list")).toEqual([]);
    expect((await h.conductor.pending()).map((p) => p.id)).toEqual([r.pending![0]!.id]);
    await h.conductor.answer({ requestId: r.pending![0]!.id, decision: "once" });
    expect(await h.conductor.wait(r.sessionId, { timeoutMs: 90_000 })).toMatchObject({ status: "done", answer: "Done elsewhere." });
    expect(readFileSync(join(other, "where.txt"), "utf8")).toBe("elsewhere\n");
  });

  it("reject with a message: the agent gets the feedback and goes on", async () => {
    h.oc.model.queue(toolCall("bash", { command: "rm -rf build", description: "clean" }), text("Understood, not deleting."));
    const r = await h.conductor.delegate({ task: "clean up" });
    expect(r.status).toBe("blocked");
    await h.conductor.answer({ requestId: r.pending![0]!.id, decision: "reject", message: "keep the build dir" });
    const done = await h.conductor.wait(r.sessionId, { timeoutMs: 90_000 });
    expect(done).toMatchObject({ status: "done", answer: "Understood, not deleting.", tools: [expect.objectContaining({ tool: "bash", status: "error" })] });
    expect(lastToolResult(r.sessionId)).toContain("keep the build dir");
  });
});
