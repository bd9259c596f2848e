// The "fix a bug" example (examples/workflows/fix-a-bug.yaml, its reviewer model swapped for the
// scripted one) from the library against the real opencode: the fix made in a worktree of its own,
// the check run there, a review (in a worktree of the reviewed branch) that asks for a change then approves, the sign-off answered, and
// the branch merged: the target ends at the last agent step's branch head.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../../src/core/conductor.js";
import type { InstanceManager } from "../../../src/core/instances/manager.js";
import { commitFiles, gitAt, type Git } from "../../support/git-repo.js";
import { resolveOpencodeBinary } from "../../../src/client/spawn.js";
import { makeProjectDir, startOpencode, type TestOpencode } from "../../support/opencode.js";
import { testInstances } from "../../support/test-instances.js";
import { text, toolCall } from "../../support/scripted-model.js";

let oc: TestOpencode;
let repo: string;
let git: Git;
let manager: InstanceManager;
let conductor: Conductor;

beforeAll(async () => {
  oc = await startOpencode();
  const binary = resolveOpencodeBinary();
  repo = await makeProjectDir(oc, "repo", { gitInit: true });
  git = gitAt(repo, oc.home);
  await commitFiles(repo, git, { "fix.txt": "v1\n" });
  manager = testInstances(oc, binary);
  conductor = new Conductor({ url: oc.url, password: oc.password, directory: repo, instances: manager, stateDir: join(oc.root, "state"), queue: false });
}, 120_000);
afterAll(async () => {
  conductor?.close();
  await manager?.stopAll();
  await oc?.stop();
});

const approve = '```json\n{"verdict": "approve", "comments": []}\n```';
const changes = '```json\n{"verdict": "request_changes", "comments": ["fix.txt: say v2 twice"]}\n```';
const write = (content: string) => toolCall("bash", { command: `printf '${content}\\n' > fix.txt`, description: "write the fix" });

describe("examples/workflows/fix-a-bug.yaml (e2e)", () => {
  it("implements in a worktree, is reviewed twice, signed off, and merged: the target is the last agent step's branch", async () => {
    const example = readFileSync(new URL("../../../examples/workflows/fix-a-bug.yaml", import.meta.url), "utf8");
    const target = (await git("branch", "--show-current")).trim();
    oc.model.for("scripted").queue(write("v2"), text("Fixed."), write("v2 v2"), text("Fixed twice."));
    oc.model.for("backup").queue(text(`Almost.\n${changes}`), text(`Good.\n${approve}`));
    const blocked = await conductor.workflow({
      text: example.replace("anthropic/claude-sonnet-4-5", "fake/backup"),
      inputs: { bug: "fix.txt says v1", target, test: "grep -q v2 fix.txt" },
      timeoutMs: 300_000,
    });
    expect(blocked.status, JSON.stringify(blocked.steps, null, 1)).toBe("blocked");
    const implement = blocked.steps[0]!;
    expect(implement.attempts.map((a) => a.turns![0]!.status)).toEqual(["done", "done"]);
    const [first, last] = implement.attempts.map((a) => a.turns![0]!.worktree!);
    expect(first!.branch).toMatch(/^conductor\//);
    // The second round started from the first one's branch.
    expect(last!.base).toBe(first!.head);
    expect(blocked.steps[2]!.attempts.map((a) => a.verdict?.verdict)).toEqual(["request_changes", "approve"]);
    expect(readFileSync(join(repo, "fix.txt"), "utf8")).toBe("v1\n");

    await conductor.workflows.answer(blocked.id, { approve: true, by: "e2e" });
    const done = await conductor.workflows.wait(blocked.id, { timeoutMs: 120_000 });
    expect(done.status, JSON.stringify(done.steps.at(-1), null, 1)).toBe("done");
    expect((await git("rev-parse", target)).trim()).toBe(last!.head);
    expect(done.steps[4]!.attempts[0]!.delivered).toMatchObject({ into: target, after: last!.head });
  }, 600_000); // four private servers start one after the other (two fixes, two reviews in worktrees of their own)
});
