// A background sub-agent in a delegation run as an MCP task, on opencode 1.x with its experimental
// flag (OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS): the shared suite
// (test/support/subagent-background-suite.ts). 1.x's notice is a user message whose one text part is
// synthetic; each reply names the user message it answers (`parentID`).
import { connect } from "../../../src/client/index.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { toolCall } from "../../support/scripted-model.js";
import { backgroundSubagentSuite, type RecordedTurn } from "../../support/subagent-background-suite.js";

backgroundSubagentSuite({
  start: () => startOpencode({ env: { OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS: "true" }, config: { agent: { general: { model: "fake/backup" } } } }),
  backgroundCall: (description) => toolCall("task", { description, prompt: `${description}, then say so`, subagent_type: "general", background: true }),
  joined: "prompt",
  async record(opencode: TestOpencode, sessionID: string) {
    const client = connect({ url: opencode.url, password: opencode.password, directory: opencode.directory });
    const [messages, children, status] = await Promise.all([
      client.call("session.messages", { path: { sessionID } }),
      client.call("session.children", { path: { sessionID } }),
      client.call("session.status"),
    ]);
    const turn = (id: string): RecordedTurn => {
      const replies = messages.flatMap((m) => (m.info.role === "assistant" && m.info.parentID === id ? [m.info] : []));
      const last = replies.at(-1);
      const lastMessage = messages.find((m) => m.info.id === last?.id);
      return {
        id,
        answer: (lastMessage?.parts ?? []).flatMap((p) => (p.type === "text" ? [p.text] : [])).join(""),
        done: last?.finish === "stop" && !last.error && last.time.completed !== undefined,
        tokens: { input: replies.reduce((n, r) => n + r.tokens.input, 0), output: replies.reduce((n, r) => n + r.tokens.output, 0) },
      };
    };
    const users = messages.filter((m) => m.info.role === "user");
    const notice = users.find((m) => m.parts.length > 0 && m.parts.every((p) => p.type === "text" && p.synthetic));
    const childID = notice?.parts.flatMap((p) => (p.type === "text" ? [/<task id="([^"]+)"/.exec(p.text)?.[1] ?? ""] : []))[0] ?? "";
    return {
      child: children.length === 1 ? children[0]!.id : `${children.length} children`,
      prompt: turn(users[0]!.info.id),
      ...(notice ? { notice: { ...turn(notice.info.id), childID } } : {}),
      busy: sessionID in status,
    };
  },
});
