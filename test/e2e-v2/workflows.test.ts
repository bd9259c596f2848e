// oc_workflow through the built MCP server on a real opencode 2.x: the shared suite
// (test/support/workflow-suite.ts). The worktrees' private servers run the same 2.x binary, as a
// user of 2.x points OPENCODE_BIN at theirs; 2.x names its shell tool and message fields its own way.
import { connectV2 } from "../../src/client/v2/index.js";
import { prepareOpencode2, startOpencode2, type V2Message } from "../support/opencode2.js";
import { toolCall } from "../support/scripted-model.js";
import { workflowSuite } from "../support/workflow-suite.js";

workflowSuite({
  start: () => startOpencode2({ gitInit: true }),
  env: async () => ({ OPENCODE_BIN: (await prepareOpencode2()).binary }),
  shell: (command) => toolCall("shell", { command }),
  async recorded(server, sessionID) {
    const v2 = await connectV2({ url: server.url, password: server.password });
    const page = (await v2.request("session.messages", { path: { sessionID }, query: { order: "asc", limit: "200" } })) as { data: V2Message[] };
    const last = page.data.filter((m) => m.type === "assistant").at(-1)!;
    return { completed: last.finish === "stop", answer: (last.content ?? []).flatMap((c) => (c.type === "text" && c.text ? [c.text] : [])).join("") };
  },
});
