// isolation "worktree" in the library on a real opencode 2.x (the private instances run the same
// 2.x binary): the shared suite (test/support/worktree-suite.ts). 2.x names its tools' fields its own way.
import { prepareOpencode2, startOpencode2 } from "../support/opencode2.js";
import { toolCall } from "../support/scripted-model.js";
import { worktreeSuite } from "../support/worktree-suite.js";

worktreeSuite({
  start: () => startOpencode2(),
  binary: async () => (await prepareOpencode2()).binary,
  write: (path, content) => toolCall("write", { path, content }),
  shell: (command) => toolCall("shell", { command }),
});
