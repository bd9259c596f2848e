// A turn opencode 1.x compacts by itself midway (compaction-turn.test.ts), where something fails: the
// compaction's summary call (HTTP 400 or 500, or an abort while it hangs), or the reply after its
// "Continue". opencode's record, re-read from the server, is the reference: the last message of the
// session is where the turn ended and holds its error (a failed summary has no "Continue" after it).
// Before, a failed summary was skipped and the turn reported `interrupted` (ToolStopped at the tool step).
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Conductor } from "../../../src/core/conductor.js";
import type { Message } from "../../../src/core/model/message.js";
import { useConductor } from "../../support/conductor.js";
import { hang, httpError, text, times, toolCall, type Step } from "../../support/scripted-model.js";

// A small context window, so one step's usage sets off opencode's own compaction.
const h = useConductor({ config: { provider: { fake: { models: { scripted: { name: "Scripted", limit: { context: 16_000, output: 1_000 } } } } } } });

const fullStep = (command: string) => toolCall("bash", { command, description: "say it" }, { usage: { prompt_tokens: 15_500, completion_tokens: 20 } });
const isContinue = (m: Message) => m.parts.some((p) => p.type === "text" && p.synthetic === true && p.metadata?.compaction_continue === true);
const tokensOf = (m: Message) => {
  if (m.info.role !== "assistant") return 0;
  const t = m.info.tokens;
  return t.input + t.output + t.reasoning + t.cache.read + t.cache.write;
};

async function run(name: string, steps: Step[], abortAtSummary = false) {
  h.oc.model.clear();
  h.oc.model.queue(...steps);
  const summaries = h.oc.model.requests.filter((r) => r.kind === "summary").length;
  const delegated = h.conductor.delegate({ task: name, timeoutMs: 90_000 });
  if (abortAtSummary) {
    const call = (await h.oc.model.waitForRequests(summaries + 1, { kind: "summary" })).at(-1)!;
    await h.conductor.client.call("session.abort", { path: { sessionID: call.sessionId! } });
  }
  const live = await delegated;
  const messages = await h.conductor.engine.messages(live.sessionId);
  const reader = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory, stateDir: join(h.oc.root, `reader-${name}`) });
  try {
    const read = await reader.result(live.sessionId);
    expect(read.state).toBe("idle");
    return { live, read: read.last, messages };
  } finally {
    reader.close();
  }
}

/** Our report, live and read back, against the session's last message: its error, the tool step's answer (none), every step's tokens. */
function expectAsRecorded(r: Awaited<ReturnType<typeof run>>) {
  const last = r.messages.at(-1)!;
  if (last.info.role !== "assistant" || !last.info.error) throw new Error("opencode recorded no error on the turn's last message");
  const error = last.info.error as { name: string; data: { message: string } };
  const status = error.name === "MessageAbortedError" ? "interrupted" : "error";
  const spent = r.messages.reduce((n, m) => n + tokensOf(m), 0);
  for (const report of [r.live, r.read]) {
    expect([report.status, report.error?.name, report.error?.message, report.answer, report.tokens?.total]).toEqual([
      status,
      error.name,
      error.data.message,
      "",
      spent,
    ]);
    expect([report.messageId, report.agent]).toEqual([r.messages[0]!.info.id, "build"]);
  }
  return last;
}

describe("a turn opencode 1.x compacts by itself, failing", () => {
  it.each([
    ["summary-400", [httpError(400)], false, "APIError"],
    ["summary-500", [times(6, httpError(500, { retryAfterMs: 200 }))], false, "APIError"],
    ["summary-abort", [hang()], true, "MessageAbortedError"],
  ] as const)("%s: ends at the failed summary, with its error", async (name, summary, abort, errorName) => {
    const r = await run(name, [fullStep(`echo ${name}`), ...summary], abort);
    const last = expectAsRecorded(r);
    // The failed summary is the last thing recorded: no "Continue", nothing after it.
    expect(last.info.role === "assistant" && [last.info.summary, last.info.error?.name]).toEqual([true, errorName]);
    expect(r.messages.some(isContinue)).toBe(false);
  });

  it("the reply after Continue fails: ends with that reply's error", async () => {
    const r = await run("continue-400", [fullStep("echo continue"), text("Summary so far."), httpError(400)]);
    const last = expectAsRecorded(r);
    expect(last.info.role === "assistant" && last.info.parentID).toBe(r.messages.find(isContinue)?.info.id);
  });
});
