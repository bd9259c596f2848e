// oc_workflow through the built MCP server on the real opencode 1.x: the shared suite (test/support/workflow-suite.ts).
import { connect } from "../../../src/client/connect.js";
import { startOpencode } from "../../support/opencode.js";
import { toolCall } from "../../support/scripted-model.js";
import { readMessages } from "../../support/turns.js";
import { workflowSuite } from "../../support/workflow-suite.js";

workflowSuite({
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
});
