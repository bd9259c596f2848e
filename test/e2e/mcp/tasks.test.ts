// Delegations and follow-ups as MCP Tasks on the real opencode 1.x: the shared suite
// (test/support/tasks-suite.ts). 1.x asks for `bash` through the server's config.
import { startOpencode } from "../../support/opencode.js";
import { toolCall } from "../../support/scripted-model.js";
import { tasksSuite } from "../../support/tasks-suite.js";

tasksSuite({
  start: () => startOpencode({ permission: { bash: "ask" } }),
  shell: (command) => toolCall("bash", { command, description: "run the command" }),
  requestKey: /^per_/,
});
