// opencode 2.x compacts a session by itself inside an execution: before a step, when the previous
// step's tokens reach the context less a buffer (here 85,000 of a 100,000 context, buffer 20,000),
// it writes a compaction message (`reason: "auto"`), calls the model for the summary, then runs the
// step again; all in one execution with one outcome event. Compared here with opencode's own record,
// re-read from the server: the messages and the execution's outcome event. Before, a turn whose
// compaction failed read back as `interrupted` (ToolStopped at the tool step), which opencode never said.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { startV2Fixture, type V2Fixture, type V2Message } from "../support/opencode2.js";
import { hang, httpError, text, toolCall, type Step } from "../support/scripted-model.js";
import { isOutcome } from "../support/v2-events.js";

let v2: V2Fixture;
let conductor: Conductor;
beforeAll(async () => {
  v2 = await startV2Fixture({ config: { provider: { fake: { models: { scripted: { name: "Scripted", limit: { context: 100_000, output: 1_000 } } } } } } });
  conductor = await Conductor.connect({ url: v2.server.url, password: v2.server.password, directory: v2.server.directory });
});
afterAll(async () => {
  conductor?.close();
  await v2?.stop();
});

/** A tool step whose usage nearly fills the context: opencode compacts before the next step. */
const fullStep = (command: string) => toolCall("shell", { command, description: "say it" }, { usage: { prompt_tokens: 85_000, completion_tokens: 20 } });

async function run(name: string, steps: Step[], during?: (sessionId: string) => Promise<void>) {
  v2.server.model.queue(...steps);
  const summaries = v2.server.model.requests.filter((r) => r.kind === "summary").length;
  const delegated = conductor.delegate({ task: name, timeoutMs: 60_000 });
  if (during) await during((await v2.server.model.waitForRequests(summaries + 1, { kind: "summary" })).at(-1)!.sessionId!);
  const live = await delegated;
  v2.server.model.clear();
  const messages = await v2.messages(live.sessionId);
  const outcome = await v2.log.waitFor(isOutcome(live.sessionId));
  const reader = new Conductor({
    url: v2.server.url,
    password: v2.server.password,
    directory: v2.server.directory,
    stateDir: join(v2.server.root, `reader-${name}`),
  });
  try {
    return { live, read: (await reader.result(live.sessionId)).last, messages, outcome, compaction: messages.find((m) => m.type === "compaction") };
  } finally {
    reader.close();
  }
}

type Tokens = { input: number; output: number; reasoning: number; cache: { read: number; write: number } };
/** What the steps spent, as each assistant message records it (2.x records the compaction's own call on no message). */
const tokensOf = (ms: V2Message[]) =>
  ms.reduce((n, m) => {
    const t = m.type === "assistant" ? (m.tokens as Tokens) : undefined;
    return n + (t ? t.input + t.output + t.reasoning + t.cache.read + t.cache.write : 0);
  }, 0);

describe("a 2.x execution that compacts by itself", () => {
  it("carries on after the compaction: done, with the answer of the step after it", async () => {
    const { live, read, messages, outcome } = await run("compacted", [fullStep("echo a"), text("Summary so far."), text("All done after the compaction.")]);
    expect(messages.map((m) => [m.type, m.reason ?? m.finish])).toEqual([
      ["user", undefined],
      ["assistant", "tool-calls"],
      ["compaction", "auto"],
      ["assistant", "stop"],
    ]);
    expect(outcome.type).toBe("session.execution.succeeded");
    const answer = messages.at(-1)!.content!.find((c) => c.type === "text")!.text;
    for (const r of [live, read]) {
      expect([r.status, r.answer, r.messageId, r.tokens?.total]).toEqual(["done", answer, messages[0]!.id, tokensOf(messages)]);
      expect(r.tools).toEqual([{ tool: "shell", status: "completed" }]);
    }
  });

  it("fails at the compaction: error, the compaction's error, for the live watch and a reader", async () => {
    const { live, read, compaction, outcome } = await run("compaction-failed", [fullStep("echo b"), httpError(400)]);
    expect(outcome.type).toBe("session.execution.failed");
    expect(compaction).toMatchObject({ reason: "auto", status: "failed", error: { type: "provider.invalid-request", status: 400 } });
    const recorded = { name: compaction!.error!.type, message: compaction!.error!.message };
    for (const r of [live, read])
      expect([r.status, r.error?.name, r.error?.message, r.model]).toEqual(["error", recorded.name, recorded.message, "fake/scripted"]);
  });

  it("interrupted during the compaction: interrupted, with the compaction's error", async () => {
    const interrupt = (sessionID: string) => v2.client.request("session.interrupt", { path: { sessionID } }).then(() => undefined);
    const { live, read, compaction, outcome } = await run("compaction-interrupted", [fullStep("echo c"), hang()], interrupt);
    expect(outcome).toMatchObject({ type: "session.execution.interrupted", data: { reason: "user" } });
    expect(compaction).toMatchObject({ reason: "auto", status: "failed", error: { type: "compaction.interrupted" } });
    for (const r of [live, read])
      expect([r.status, r.error?.name, r.error?.message]).toEqual(["interrupted", "compaction.interrupted", compaction!.error!.message]);
  });
});
