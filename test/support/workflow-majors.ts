// The two opencode majors as the workflow tests run them (test/support/workflow-suite.ts, the
// console's browser test): the harness server, what a user of that major gives the MCP server, the
// agent's shell tool in that major's words, and the session's last answer read back from opencode.
import { connect } from "../../src/client/connect.js";
import { connectV2 } from "../../src/client/v2/index.js";
import { startOpencode } from "./opencode.js";
import { prepareOpencode2, startOpencode2, type V2Message } from "./opencode2.js";
import { toolCall } from "./scripted-model.js";
import { readMessages } from "./turns.js";
import type { WorkflowMajor } from "./workflow-suite.js";

export const WORKFLOW_V1: WorkflowMajor = {
  start: () => startOpencode({ gitInit: true }),
  env: async () => ({}),
  shell: (command) => toolCall("bash", { command, description: "write the fix" }),
  async recorded(server, sessionId) {
    const client = connect({ url: server.url, password: server.password, directory: server.directory });
    const last = [...(await readMessages(client, sessionId))].reverse().find((m) => m.info.role === "assistant")!;
    return {
      completed: "completed" in last.info.time && Boolean(last.info.time.completed),
      answer: last.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(""),
    };
  },
};

// The worktrees' private servers run the same 2.x binary, as a user of 2.x points OPENCODE_BIN at
// theirs; 2.x names its shell tool and message fields its own way.
export const WORKFLOW_V2: WorkflowMajor = {
  start: () => startOpencode2({ gitInit: true }),
  env: async () => ({ OPENCODE_BIN: (await prepareOpencode2()).binary }),
  shell: (command) => toolCall("shell", { command }),
  async recorded(server, sessionID) {
    const v2 = await connectV2({ url: server.url, password: server.password });
    const page = (await v2.request("session.messages", { path: { sessionID }, query: { order: "asc", limit: "200" } })) as { data: V2Message[] };
    const last = page.data.filter((m) => m.type === "assistant").at(-1)!;
    return { completed: last.finish === "stop", answer: (last.content ?? []).flatMap((c) => (c.type === "text" && c.text ? [c.text] : [])).join("") };
  },
};
