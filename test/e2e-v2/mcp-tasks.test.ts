// Delegations and follow-ups as MCP Tasks on opencode 2.x (the pre-release the e2e-v2 project
// builds): the shared suite (test/support/tasks-suite.ts). The pre-release takes no per-session
// rules, so its server's `shell: ask` asks.
import { startOpencode2 } from "../support/opencode2.js";
import { toolCall } from "../support/scripted-model.js";
import { tasksSuite } from "../support/tasks-suite.js";

tasksSuite({
  start: () => startOpencode2({ permission: { shell: "ask" } }),
  shell: (command) => toolCall("shell", { command }),
  requestKey: /^per_/,
});
