// A background sub-agent in a delegation run as an MCP task, on the opencode 2.x pre-release: the
// shared suite (test/support/subagent-background-suite.ts). 2.x's notice is a `synthetic` input
// (`metadata: {source: "subagent", childID}`); the replies after an input answer it.
import { connectV2 } from "../../src/client/v2/index.js";
import { startOpencode2, type V2Message } from "../support/opencode2.js";
import type { TestOpencode } from "../support/opencode.js";
import { toolCall } from "../support/scripted-model.js";
import { backgroundSubagentSuite, type RecordedTurn } from "../support/subagent-background-suite.js";

backgroundSubagentSuite({
  start: () => startOpencode2({ config: { agent: { general: { model: "fake/backup" } } } }),
  backgroundCall: (description) => toolCall("subagent", { agent: "general", description, prompt: `${description}, then say so`, background: true }),
  joined: "notice",
  async record(opencode: TestOpencode, sessionID: string) {
    const v2 = await connectV2({ url: opencode.url, password: opencode.password });
    const [messages, children, active] = await Promise.all([
      v2.request("session.messages", { path: { sessionID }, query: { order: "asc", limit: "200" } }).then((r) => (r as { data: V2Message[] }).data),
      v2.request("session.list", { query: { parentID: sessionID } }).then((r) => (r as { data: Array<{ id: string }> }).data),
      v2.request("session.active", {}).then((r) => (r as { data: Record<string, unknown> }).data),
    ]);
    const isNotice = (m: V2Message) => m.type === "synthetic" && (m.metadata as { source?: string } | undefined)?.source === "subagent";
    const starts = messages.flatMap((m, i) => (m.type === "user" || isNotice(m) ? [i] : []));
    /** The turn of the input at `at`: the replies up to the next input. */
    const turn = (at: number): RecordedTurn => {
      const next = starts.find((i) => i > at) ?? messages.length;
      const replies = messages.slice(at + 1, next).filter((m) => m.type === "assistant");
      const last = replies.at(-1);
      const sum = (f: (t: { input: number; output: number }) => number) => replies.reduce((n, m) => n + f(m.tokens as { input: number; output: number }), 0);
      return {
        id: messages[at]!.id,
        answer: (last?.content ?? []).flatMap((c) => (c.type === "text" ? [c.text ?? ""] : [])).join(""),
        done: last?.finish === "stop" && !last.error,
        tokens: { input: sum((t) => t.input), output: sum((t) => t.output) },
      };
    };
    const noticeAt = messages.findIndex(isNotice);
    return {
      child: children.length === 1 ? children[0]!.id : `${children.length} children`,
      prompt: turn(starts[0]!),
      ...(noticeAt >= 0 ? { notice: { ...turn(noticeAt), childID: String((messages[noticeAt]!.metadata as { childID?: string }).childID) } } : {}),
      busy: sessionID in active,
    };
  },
});
