// An audit trail that cannot be written (issue 24 item 3), through the built MCP server over stdio
// against the real opencode 1.x and the scripted model, in six cases: a read-only state dir,
// /dev/full as the audit path, an audit path that is a directory, a 0444 file, an unwritable HOME and
// a full disk. In each: the failure is said on stderr, by oc_status and in every answer; with
// OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 a task that would write a file is refused with the reason
// (opencode's record shows no session was created and the file does not exist); once the cause is
// fixed the server notices by itself and writes what it held. Without the option the task runs and
// its answer carries the warning.
//
// Permissions do not stop root, so when the tests run as root the MCP server runs as `nobody`
// (setpriv). The full disk is a 1 MB tmpfs mounted in a mount namespace of the server's own
// (`unshare -m` as root, `unshare -Urm` otherwise) and filled before the server starts; where no
// namespace can be made the case uses /dev/full and says so in its title. Everything lives in temp
// dirs; permissions are given back and the dirs removed in afterAll.
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { connect, type OpencodeClient } from "../../../src/client/connect.js";
import { CLI, toolCallOf, type ToolCall } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { text, toolCall } from "../../support/scripted-model.js";

const ROOT = process.getuid?.() === 0;
/** The user the MCP server runs as: `nobody` under root (so that permissions hold), else ourselves. */
const UID = ROOT ? 65534 : process.getuid!();
const GID = ROOT ? 65534 : process.getgid!();
const AS_USER = ROOT ? ["setpriv", `--reuid=${UID}`, `--regid=${GID}`, "--clear-groups", "--"] : [];
/** How a mount namespace is made here, if one can be. */
const NAMESPACE = [
  ["unshare", "-m"],
  ["unshare", "-Urm"],
].find((cmd) => spawnSync(cmd[0]!, [...cmd.slice(1), "true"]).status === 0);
/** A user namespace maps only us: the server inside runs as its root there, which a full disk stops as well. */
const FULL_DISK_AS_USER = NAMESPACE?.[1] === "-m" ? AS_USER : [];

let server: TestOpencode;
let opencode: OpencodeClient;
let base: string;

interface Running {
  call(tool: string, args?: Record<string, unknown>): Promise<ToolCall>;
  /** Resolves when stderr has said something matching `pattern` (a generous ceiling). */
  said(pattern: RegExp): Promise<string>;
  pid: number;
  close(): Promise<void>;
}

async function startServer(command: string[], env: Record<string, string>): Promise<Running> {
  const transport = new StdioClientTransport({
    command: command[0]!,
    args: command.slice(1),
    env: { PATH: process.env.PATH ?? "", OPENCODE_URL: server.url, OPENCODE_PASSWORD: server.password, OPENCODE_CONDUCTOR_DIRECTORY: server.directory, ...env },
    stderr: "pipe",
  });
  let stderr = "";
  const waiting = new Set<() => void>();
  transport.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    waiting.forEach((w) => w());
  });
  const client = new Client({ name: "e2e-unwritable", version: "1.0.0" });
  await client.connect(transport);
  return {
    pid: transport.pid!,
    async call(tool, args = {}) {
      return toolCallOf((await client.callTool({ name: tool, arguments: args }, { timeout: 120_000 })) as CallToolResult);
    },
    said(pattern) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => (waiting.delete(check), reject(new Error(`stderr never said ${pattern}:\n${stderr}`))), 60_000);
        const check = () => {
          const m = pattern.exec(stderr);
          if (!m) return;
          clearTimeout(timer);
          waiting.delete(check);
          resolve(m[0]);
        };
        waiting.add(check);
        check();
      });
    },
    close: () => client.close(),
  };
}

/** A folder in `base` that the server's user owns (mode 0700 unless given). */
function ownedDir(name: string, mode = 0o700): string {
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  chownSync(dir, UID, GID);
  chmodSync(dir, mode);
  return dir;
}

/** A folder the server's user may enter but not write: root's under root, else ours with mode 0555. */
function readOnlyDir(name: string): string {
  const dir = join(base, name);
  mkdirSync(dir);
  chmodSync(dir, ROOT ? 0o755 : 0o555);
  return dir;
}
const makeWritable = (dir: string) => (ROOT ? chownSync(dir, UID, GID) : chmodSync(dir, 0o755));

interface Case {
  name: string;
  /** The environment and command of the MCP server for this case (made fresh for each server). */
  setUp(): { env: Record<string, string>; command?: string[]; audit: string };
  /** What the failure's reason says. */
  why: RegExp;
  /** Whether the task records fail too. */
  tasks: boolean;
  /** Fixes the cause (the running server must notice by itself); undefined when it cannot be fixed. */
  fix?(running: Running): void;
}

/** /dev/full as the audit path: it opens, and every write fails (ENOSPC); it never recovers. */
function devFull(name: string): Case {
  return {
    name,
    setUp: () => ({
      env: { OPENCODE_CONDUCTOR_AUDIT: "/dev/full", OPENCODE_CONDUCTOR_STATE_DIR: freshState(), HOME: ownedDir("home-ok") },
      audit: "/dev/full",
    }),
    why: /ENOSPC/,
    tasks: false,
  };
}

const freshState = () => ownedDir(`state-${Math.random().toString(36).slice(2)}`);

const CASES: Case[] = [
  {
    name: "a read-only state dir",
    setUp() {
      const state = readOnlyDir(`ro-state-${Math.random().toString(36).slice(2)}`);
      this.fix = () => makeWritable(state);
      return { env: { OPENCODE_CONDUCTOR_STATE_DIR: state, HOME: ownedDir("home-ok") }, audit: join(state, "audit.jsonl") };
    },
    why: /EACCES/,
    tasks: true,
  },
  devFull("/dev/full as the audit path"),
  {
    name: "an audit path that is a directory",
    setUp() {
      const state = freshState();
      const audit = ownedDir(`${state.slice(base.length + 1)}/audit.jsonl`);
      this.fix = () => rmSync(audit, { recursive: true });
      return { env: { OPENCODE_CONDUCTOR_STATE_DIR: state, HOME: ownedDir("home-ok") }, audit };
    },
    why: /EISDIR/,
    tasks: false,
  },
  {
    name: "a 0444 audit file",
    setUp() {
      const state = freshState();
      const audit = join(state, "audit.jsonl");
      writeFileSync(audit, "");
      chownSync(audit, UID, GID);
      chmodSync(audit, 0o444);
      this.fix = () => chmodSync(audit, 0o644);
      return { env: { OPENCODE_CONDUCTOR_STATE_DIR: state, HOME: ownedDir("home-ok") }, audit };
    },
    why: /EACCES/,
    tasks: false,
  },
  {
    name: "an unwritable HOME (the default state dir under it)",
    setUp() {
      const home = readOnlyDir(`home-ro-${Math.random().toString(36).slice(2)}`);
      this.fix = () => makeWritable(home);
      return { env: { HOME: home }, audit: join(home, ".local", "state", "opencode-conductor", "audit.jsonl") };
    },
    why: /EACCES/,
    tasks: true,
  },
  NAMESPACE
    ? {
        name: `a full disk (a full 1 MB tmpfs, ${NAMESPACE.join(" ")})`,
        setUp() {
          const mount = ownedDir(`tmpfs-${Math.random().toString(36).slice(2)}`, 0o755);
          // Mounted in the server's own mount namespace: gone when it exits, seen from here through /proc/PID/root.
          const own = ROOT ? `chown ${UID}:${GID} "$0/state" && ` : ""; // in a user namespace we are its root
          const script = `mount -t tmpfs -o size=1m,mode=0755 tmpfs "$0" && mkdir "$0/state" && ${own}(dd if=/dev/zero of="$0/fill" bs=64k 2>/dev/null; true) && exec "$@"`;
          this.fix = (running) => rmSync(`/proc/${running.pid}/root${mount}/fill`);
          return {
            command: [...NAMESPACE, "sh", "-c", script, mount, ...FULL_DISK_AS_USER, process.execPath, CLI],
            env: { OPENCODE_CONDUCTOR_STATE_DIR: join(mount, "state"), HOME: ownedDir("home-ok") },
            audit: join(mount, "state", "audit.jsonl"),
          };
        },
        why: /ENOSPC/,
        tasks: true,
      }
    : devFull("a full disk (no mount namespace can be made here: /dev/full instead)"),
];

const sessionCount = async () => (await opencode.call("session.list", {})).length;

// A test that failed must not leave its model steps to the next.
beforeEach(() => server.model.clear());

beforeAll(async () => {
  server = await startOpencode();
  opencode = connect({ url: server.url, password: server.password, directory: server.directory });
  base = mkdtempSync(join(tmpdir(), "occ-unwritable-"));
  chmodSync(base, 0o755); // the server's user must reach its folders
});
afterAll(async () => {
  await server?.stop();
  if (base) {
    // Give every folder back before removing it (a 0555 folder cannot be emptied by its owner).
    spawnSync("chmod", ["-R", "u+rwX", base]);
    rmSync(base, { recursive: true, force: true });
  }
});

describe.each(CASES)("$name", (c) => {
  it("OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1: said on stderr, by oc_status and in each answer; the task is refused with the reason; recovery is noticed by itself", async () => {
    const setup = c.setUp();
    const mcp = await startServer([...(setup.command ?? [...AS_USER, process.execPath, CLI])], { ...setup.env, OPENCODE_CONDUCTOR_AUDIT_REQUIRED: "1" });
    try {
      const target = join(server.directory, `refused-${Math.random().toString(36).slice(2)}.txt`);
      const before = await sessionCount();
      const refused = await mcp.call("oc_delegate", { task: `Write ${target}`, permissions: "auto" });
      expect(refused.isError, refused.text).toBe(true);
      expect(refused.text).toMatch(/^oc_delegate refused, nothing was started: the audit trail /);
      expect(refused.text).toContain(setup.audit);
      expect(refused.text).toMatch(c.why);
      expect(refused.text).toContain("OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 refuses work that can change files until it can be");
      expect(await sessionCount()).toBe(before); // opencode's record: no session was created
      expect(existsSync(target)).toBe(false);

      await mcp.said(
        new RegExp(
          `opencode-conductor: the audit trail ${setup.audit.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} cannot be written \\(since [^)]+\\): [^\\n]*${c.why.source}`,
        ),
      );
      if (c.tasks) await mcp.said(/opencode-conductor: the task records .* cannot be written/);

      const status = await mcp.call("oc_status");
      expect(status.isError, status.text).toBe(false);
      expect(status.data.audit_trail).toMatchObject({ path: setup.audit, writable: false, error: expect.stringMatching(c.why), since: expect.any(String) });
      expect(status.data.task_records).toMatchObject({ writable: !c.tasks });
      expect(status.text).toMatch(/AUDIT TRAIL UNWRITABLE: the audit trail .* cannot be written/);

      const read = await mcp.call("oc_sessions", {});
      expect(read.isError, read.text).toBe(false);
      expect(read.text).toMatch(/WARNING: the audit trail .* cannot be written .*; work that can change files is refused until then/);
      expect(read.data.unwritable).toEqual(
        expect.arrayContaining([expect.objectContaining({ file: "audit trail", path: setup.audit, error: expect.stringMatching(c.why) })]),
      );

      if (!c.fix) return; // /dev/full never takes a line
      c.fix(mcp);
      await mcp.said(/the audit trail .* can be written again \(unwritable from .* to .*\); \d+ held lines? written/);
      const healthy = await mcp.call("oc_status");
      expect(healthy.data.audit_trail).toMatchObject({ writable: true, held: 0 });
      expect(healthy.text).not.toContain("WARNING");
      // What it held is in the trail now: the refused call (never its `started` line: nothing started), then the outage.
      const lines = readFileSync(c.name.startsWith("a full disk") ? `/proc/${mcp.pid}/root${setup.audit}` : setup.audit, "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as { tool: string; outcome: string; error?: string });
      expect(lines.map((l) => [l.tool, l.outcome])).toEqual([
        ["oc_delegate", "error"],
        ["audit-trail", "unwritable"],
      ]);
      expect(lines[0]!.error).toMatch(/^oc_delegate refused, nothing was started/);
    } finally {
      await mcp.close();
    }
  });
});

describe.each(CASES.filter((c) => c.name === "a 0444 audit file" || c.name === "an audit path that is a directory"))("$name, without the option", (c) => {
  it("the task runs as asked and its answer carries the warning; the held line is written once the file can be", async () => {
    const setup = c.setUp();
    const mcp = await startServer([...AS_USER, process.execPath, CLI], setup.env);
    try {
      const target = join(server.directory, `done-${Math.random().toString(36).slice(2)}.txt`);
      server.model.queue(toolCall("write", { filePath: target, content: "written\n" }), text("Wrote it."));
      const r = await mcp.call("oc_delegate", { task: `Write ${target}`, permissions: "auto" });
      expect(r.data.status, r.text).toBe("done");
      expect(readFileSync(target, "utf8")).toBe("written\n");
      expect(r.text).toMatch(new RegExp(`WARNING: the audit trail .* cannot be written .*${c.why.source}.*; (1 line waits|\\d+ lines wait) in memory`));
      expect(r.text).toContain("OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 would refuse work that can change files");
      c.fix!(mcp);
      await mcp.said(/the audit trail .* can be written again/);
      const lines = readFileSync(setup.audit, "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as { tool: string; outcome: string; session_id?: string; files?: string[] });
      // The files as the answer (opencode's record of the turn) named them.
      expect(lines[0]).toMatchObject({
        tool: "oc_delegate",
        outcome: "done",
        session_id: r.data.session_id,
        files: (r.data.files as Array<{ path: string }>).map((f) => f.path),
      });
      expect(lines[0]!.files).toEqual([basename(target)]);
    } finally {
      await mcp.close();
    }
  });
});

describe("task records that cannot be written (a directory where tasks.jsonl should be)", () => {
  it("the task runs, its answer says the console does not see it, and both of its lines are written once they can be", async () => {
    const state = freshState();
    const tasks = ownedDir(`${state.slice(base.length + 1)}/tasks.jsonl`);
    const mcp = await startServer([...AS_USER, process.execPath, CLI], { OPENCODE_CONDUCTOR_STATE_DIR: state, HOME: ownedDir("home-ok") });
    try {
      await mcp.said(/opencode-conductor: the task records .*tasks\.jsonl cannot be written \(since [^)]+\): EISDIR/);
      server.model.queue(text("Nothing to write."));
      const r = await mcp.call("oc_delegate", { task: "Say so" });
      expect(r.data.status, r.text).toBe("done");
      expect(r.text).toMatch(
        /WARNING: the task records .*tasks\.jsonl cannot be written .*EISDIR.*; 2 lines wait in memory and are written as soon as it can be; the web console does not see this work until then\./,
      );
      expect(r.text).not.toContain("the audit trail");
      rmSync(tasks, { recursive: true });
      await mcp.said(/the task records .* can be written again .*; 2 held lines written/);
      const lines = readFileSync(tasks, "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as { event: string; session_id: string; status?: string });
      expect(lines.map((l) => [l.event, l.session_id, l.status])).toEqual([
        ["start", r.data.session_id, undefined],
        ["end", r.data.session_id, "done"],
      ]);
    } finally {
      await mcp.close();
    }
  });
});

describe("a read-only state dir, without the option", () => {
  it("the delegation ledger refuses the task (nothing starts without its record), and the answer carries the warning", async () => {
    const setup = CASES.find((c) => c.name === "a read-only state dir")!.setUp();
    const mcp = await startServer([...AS_USER, process.execPath, CLI], setup.env);
    try {
      const before = await sessionCount();
      const r = await mcp.call("oc_delegate", { task: "Write nothing" });
      expect(r.isError, r.text).toBe(true);
      expect(r.text).toMatch(/The delegation ledger cannot be written in .* \(EACCES\)/);
      expect(r.text).toMatch(/WARNING: the audit trail .* cannot be written .*EACCES/);
      expect(await sessionCount()).toBe(before);
    } finally {
      await mcp.close();
    }
  });
});
