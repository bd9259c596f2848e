// isolation "worktree" through the built MCP server (opencode 1.x, scripted model): a batch of
// worktree tasks answers with each task's branch, what its branch holds is what opencode recorded
// its agent writing, oc_session merge brings them back (the first lands, the rest conflict on the
// file), the patch resource has the whole patch, remove_worktree takes a task away. Then a SIGKILL
// of the MCP server in the middle of a batch: the next start leaves no worktree or branch the
// registry does not account for, nor any of the killed server's opencode processes, and the
// finished tasks' branches are still there.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isProcessAlive } from "../../../src/client/discovery/processes.js";
import { Conductor } from "../../../src/core/conductor.js";
import { commitFiles, gitAt, userSide, type Git } from "../../support/git-repo.js";
import { startMcp, type McpSession } from "../../support/mcp-client.js";
import { makeProjectDir, offlineConfig, startOpencode, xdg, type TestOpencode } from "../../support/opencode.js";
import { text, toolCall } from "../../support/scripted-model.js";

// Each task has its own model, so its steps are its own whatever order the sessions start in.
const MODELS = Array.from({ length: 8 }, (_, i) => `t${i}`);
const SLOW = 600_000;
const LINGER = `exec node -e "const p = process.ppid; setInterval(() => process.ppid !== p && process.exit(), 200); setTimeout(() => process.exit(), 300000)"`;

let oc: TestOpencode;
let repo: string;
let git: Git;
let stateDir: string;
let env: Record<string, string>;
let reader: Conductor;
const servers: McpSession[] = [];

beforeAll(async () => {
  oc = await startOpencode();
  repo = await makeProjectDir(oc, "repo", { gitInit: true });
  git = gitAt(repo, oc.home);
  await commitFiles(repo, git, { "shared.txt": "base\n" });
  stateDir = join(oc.root, "state");
  const models = Object.fromEntries(MODELS.map((m) => [m, { name: m }]));
  env = {
    OPENCODE_URL: oc.url,
    OPENCODE_PASSWORD: oc.password,
    OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
    // What the worktrees' private servers inherit: the harness's home and the scripted provider, offline.
    ...xdg(oc.home),
    OPENCODE_CONFIG_CONTENT: JSON.stringify(offlineConfig(oc.model.baseURL, { config: { provider: { fake: { models } } } })),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    npm_config_registry: "http://127.0.0.1:9/",
  };
  reader = new Conductor({ url: oc.url, password: oc.password, directory: oc.directory });
}, 120_000);
afterAll(async () => {
  for (const s of servers) await s.close().catch(() => undefined);
  reader?.close();
  await oc?.stop();
});

async function mcp(): Promise<McpSession> {
  const s = await startMcp(env);
  servers.push(s);
  return s;
}

interface Row {
  session_id: string;
  status: string;
  isolation?: string;
  worktree: { state: string; branch?: string; base: string; head: string; files: Array<{ path: string }>; patch: string; path: string; port: number };
}

type Registry = Array<{ sessionId?: string; state: string; path: string; branch?: string }>;
const registry = (): Registry =>
  existsSync(join(stateDir, "worktrees.json")) ? JSON.parse(readFileSync(join(stateDir, "worktrees.json"), "utf8")).worktrees : [];
const instanceRows = (): Array<{ pid: number; conductorPid: number }> =>
  existsSync(join(stateDir, "instances.json")) ? JSON.parse(readFileSync(join(stateDir, "instances.json"), "utf8")).instances : [];
const branches = async () => (await git("branch", "--list", "conductor/*", "--format=%(refname:short)")).split("\n").filter(Boolean).sort();
const worktreePaths = async () => (await git("worktree", "list", "--porcelain")).split("\n").flatMap((l) => (l.startsWith("worktree ") ? [l.slice(9)] : []));

/** What opencode recorded the session's agent writing to `file` (the write tool's input). */
async function recordedWrite(sessionId: string, file: string): Promise<string | undefined> {
  for (const m of await reader.engine.messages(sessionId))
    for (const p of m.parts)
      if (p.type === "tool" && p.tool === "write" && String((p.state.input as { filePath?: string }).filePath).endsWith(file))
        return (p.state.input as { content: string }).content;
  return undefined;
}

describe("worktree tasks through the MCP server", () => {
  let first: McpSession;
  let rows: Row[];

  it(
    "a batch comes back as one branch per task, each holding what opencode recorded; the user's checkout is untouched",
    async () => {
      first = await mcp();
      for (const [i, m] of MODELS.slice(0, 4).entries())
        oc.model.for(m).queue(toolCall("write", { filePath: "shared.txt", content: `task ${i}\n` }), text(`Wrote task ${i}.`));
      const before = await userSide({ repo, git });
      const r = await first.call(
        "oc_delegate_parallel",
        {
          tasks: MODELS.slice(0, 4).map((m, i) => ({ task: `Write task ${i}`, directory: repo, model: `fake/${m}` })),
          isolation: "worktree",
          setup: "git status --short",
        },
        { timeoutMs: SLOW },
      );
      expect(r.isError, r.text).toBe(false);
      expect(await userSide({ repo, git })).toEqual(before);
      rows = r.data.results as Row[];
      for (const row of rows) {
        expect(row.status, r.text).toBe("done");
        expect(row.isolation).toBe("worktree");
        expect(row.worktree).toMatchObject({ state: "finished", branch: `conductor/${row.session_id}`, base: before.head, files: [{ path: "shared.txt" }] });
        const written = await recordedWrite(row.session_id, "shared.txt");
        expect(written).toMatch(/^task \d\n$/);
        expect(await git("show", `${row.worktree.branch}:shared.txt`)).toBe(written);
        expect(row.worktree.patch).toContain(`+${written}`);
      }
      expect(new Set(rows.map((row) => row.worktree.branch)).size).toBe(4);
      expect(r.text).toContain('oc_session {"action":"merge"');
    },
    SLOW,
  );

  it("oc_session merge brings them back in order: the first lands, the others conflict on the file and name it", async () => {
    const ids = rows.map((row) => row.session_id);
    const r = await first.call("oc_session", { action: "merge", session_id: ids[0], also: ids.slice(1), into: "integration" });
    expect(r.isError, r.text).toBe(false);
    const report = (r.data as { result: { outcomes: Array<{ id: string; result: string; files?: string[]; with?: string[] }>; landed: string } }).result;
    expect(report.landed).toBe("ref");
    expect(report.outcomes[0]).toMatchObject({ id: ids[0], result: "fast-forward" });
    for (const o of report.outcomes.slice(1)) expect(o).toMatchObject({ result: "conflict", files: ["shared.txt"], with: [ids[0]] });
    expect(await git("rev-parse", "integration^{tree}")).toBe(await git("rev-parse", `conductor/${ids[0]}^{tree}`));
  });

  it("the patch resource holds the whole patch; remove_worktree takes a task's worktree and branch away", async () => {
    const row = rows[1]!;
    const patch = await first.client.readResource({ uri: `opencode://session/${row.session_id}/patch` });
    expect((patch.contents[0] as { text: string }).text).toBe(
      await git("diff", "--binary", "--no-renames", "--no-color", row.worktree.base, row.worktree.branch!),
    );
    const r = await first.call("oc_session", { action: "remove_worktree", session_id: rows[3]!.session_id });
    expect(r.isError, r.text).toBe(false);
    expect(r.data.result).toEqual({ checkout_removed: true, branch: rows[3]!.worktree.branch, branch_result: "deleted" });
    expect(existsSync(rows[3]!.worktree.path)).toBe(false);
    expect(await branches()).not.toContain(rows[3]!.worktree.branch);
  });

  it(
    "after a SIGKILL mid-batch, the next start leaves nothing the registry does not account for, and finished branches stay",
    async () => {
      const doomed = await mcp();
      const earlier = new Set(registry().map((row) => row.sessionId));
      const ours = () => registry().filter((row) => !earlier.has(row.sessionId));
      const [a, b, c, d] = MODELS.slice(4);
      for (const m of [a!, b!]) oc.model.for(m).queue(toolCall("write", { filePath: `${m}.txt`, content: `${m}\n` }), text(`Wrote ${m}.`));
      // A long command keeps these turns running (a hung model stream would turn into retries, then an
      // error). opencode starts commands in their own process group and does not stop them when it is
      // killed, so this one ends by itself once its parent (the instance) is gone.
      for (const m of [c!, d!]) oc.model.for(m).queue(toolCall("bash", { command: LINGER, timeout: 400_000, description: "wait" }));
      const call = doomed
        .call(
          "oc_delegate_parallel",
          { tasks: [a, b, c, d].map((m) => ({ task: `Task ${m}`, directory: repo, model: `fake/${m}` })), isolation: "worktree" },
          { timeoutMs: SLOW },
        )
        .catch((e: unknown) => e);
      // Two tasks finished (committed, on record), two agents hang in their turn.
      await oc.model.waitForRequests(1, { model: c!, timeoutMs: 240_000 });
      await oc.model.waitForRequests(1, { model: d!, timeoutMs: 240_000 });
      await until(() => ours().filter((row) => row.state === "finished" && row.branch).length === 2, 240_000);
      const finished = ours().filter((row) => row.state === "finished");
      const running = ours().filter((row) => row.state === "running");
      expect(running).toHaveLength(2);
      // The private servers the doomed MCP server started (the two hanging tasks' at least) outlive it.
      const orphans = instanceRows()
        .filter((row) => row.conductorPid === doomed.transport.pid)
        .map((row) => row.pid);
      expect(orphans.length).toBeGreaterThanOrEqual(2);
      process.kill(doomed.transport.pid!, "SIGKILL");
      await call;

      const next = await mcp();
      // Any worktree call waits for the start's cleanup; merging the finished ones also shows their branches work.
      const r = await next.call("oc_session", { action: "merge", session_id: finished[0]!.sessionId, also: [finished[1]!.sessionId], into: "after-crash" });
      expect(r.isError, r.text).toBe(false);
      expect((r.data.result as { outcomes: Array<{ result: string }> }).outcomes.map((o) => o.result)).toEqual(["fast-forward", "merged"]);
      const listed = registry();
      expect(listed.some((row) => row.state !== "finished")).toBe(false);
      for (const row of running) expect(existsSync(row.path)).toBe(false);
      // Every task branch and worktree is one the registry lists; the finished tasks' are all there.
      expect(await branches()).toEqual(listed.flatMap((row) => (row.branch ? [row.branch] : [])).sort());
      for (const row of finished) expect(await branches()).toContain(row.branch);
      expect((await worktreePaths()).sort()).toEqual([repo, ...listed.filter((row) => existsSync(row.path)).map((row) => row.path)].sort());
      // And no process: the next start stops the dead server's private opencode servers and forgets them.
      await until(() => orphans.every((pid) => !isProcessAlive(pid)), 120_000);
      expect(instanceRows().filter((row) => orphans.includes(row.pid))).toEqual([]);
    },
    SLOW,
  );
});

/** A bounded check of a file another process writes (no event to wait on across processes). */
async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not true after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
