// The process-tree snapshot the orphan checks use (test/support/process-tree.ts): a child, its
// grandchild in a process group of its own (as opencode runs a shell command), and a member of
// that group reparented away all belong to the tree; a command name with spaces and parentheses
// is read whole.
import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { killAll, parseStat, processTree, treeWith, untilGone, type ProcessInfo } from "../support/process-tree.js";

const started: ProcessInfo[] = [];
afterEach(() => killAll(started.splice(0)));

describe("the process tree", () => {
  it("reads a /proc stat line whose command holds spaces and parentheses", () => {
    const line = "4242 (my (odd) cmd) S 17 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 123456 0 0";
    expect(parseStat(line)).toEqual({ pid: 4242, command: "my (odd) cmd", ppid: 17, pgid: 4242, startTime: 123456 });
    expect(parseStat("4243 (gone) Z 17 4242 4242 0")).toBeUndefined();
  });

  it("holds a grandchild in its own process group, and a member of that group whose parent left", async () => {
    // sh starts node as the leader of a new group (setsid); node's own sh starts `sleep` and exits,
    // so `sleep` is reparented out of the tree but stays in the group node leads.
    const script = `require("node:child_process").spawn("sh", ["-c", "sleep 300 & exit 0"], { stdio: "ignore" }); setTimeout(() => {}, 300000);`;
    const child = spawn("sh", ["-c", `setsid ${JSON.stringify(process.execPath)} -e '${script}' & wait`], { stdio: "ignore" });
    // Once node's sh has exited, `sleep` hangs off no process of the tree: only its group holds it.
    const reparented = (tree: ProcessInfo[]) => tree.some((p) => p.command === "sleep" && !tree.some((q) => q.pid === p.ppid));
    let tree = await treeWith(child.pid!, (p) => p.command === "sleep", 30_000);
    started.push(...tree);
    for (const deadline = Date.now() + 30_000; !reparented(tree) && Date.now() < deadline; tree = processTree(child.pid!))
      await new Promise((r) => setTimeout(r, 25));
    started.push(...tree);
    // node is found by its place, not its name: Node 24 names its main thread "MainThread", which
    // is what /proc reports as the command. It is the child's child that leads a group of its own.
    const node = tree.find((p) => p.ppid === child.pid && p.pgid === p.pid);
    const sleep = tree.find((p) => p.command === "sleep");
    expect(node, JSON.stringify(tree)).toBeDefined();
    expect(sleep?.pgid).toBe(node!.pid);
    expect(reparented(tree)).toBe(true);
    killAll(tree);
    expect(await untilGone(tree, 10_000)).toEqual([]);
  });
});
