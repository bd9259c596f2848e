// isolation "worktree" in the library on the real opencode 1.x: the shared suite (test/support/worktree-suite.ts).
import { resolveOpencodeBinary } from "../../../src/client/spawn.js";
import { startOpencode } from "../../support/opencode.js";
import { toolCall } from "../../support/scripted-model.js";
import { worktreeSuite } from "../../support/worktree-suite.js";

worktreeSuite({
  start: () => startOpencode(),
  binary: async () => resolveOpencodeBinary(),
  write: (filePath, content) => toolCall("write", { filePath, content }),
  shell: (command) => toolCall("bash", { command, description: "start the dev server" }),
});
